"""Many cases of one lean ``http://`` HttpTarget on one thread: non-blocking sockets, one selector.

Why: with a thread per case, every socket call releases and retakes the interpreter
lock, and with 64-128 threads waiting for it each handoff is a futex wake and a
context switch (measured for #27: about 70 futex calls and 11-17 context switches per
request at c=64-128 under strace and getrusage).  That handoff, not the HTTP work,
was most of the client's CPU per request.  Here one thread (the caller's) sends every
request, waits for all replies in one ``select``/``epoll`` call and parses them as
they arrive, so the lock is never contended.

It keeps the threaded path's contract, case by case: the same request bytes and
reply parsing (:class:`~evalkit.targets.http_wire.ReplyReader`), the same
:class:`~evalkit.targets.http_exchange.Attempt` and httpx exception types, so the
retry rule, ``interpret`` and every error message are unchanged; ``timeout_s`` bounds
each network wait (connect, write, each read); the latency is the kernel's receive
time of the final reply minus the first attempt's send (or connect), as on the
blocking path.  The case deadline, the pacing and the callbacks belong to the caller
(:func:`evalkit._engine.execute.evaluate`); a case past its deadline has its
connection closed and is never interpreted.
"""

from __future__ import annotations

import contextlib
import errno
import heapq
import itertools
import os
import select
import selectors
import socket
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol

import httpx

from evalkit.errors import EvalkitError, RuntimeFailure
from evalkit.targets.http_codec import ReplyReader
from evalkit.targets.http_exchange import (
    Attempt,
    PreparedRequest,
    log_retry,
    measured_latency_ms,
)
from evalkit.targets.http_wire import WirePool, _Connection, decoded

if TYPE_CHECKING:
    from evalkit._model.golden_cases import GoldenCase
    from evalkit._model.results import TargetResponse

__all__ = ["LoopTarget", "run_cases"]

_CONNECT: Final = "connect"
_SEND: Final = "send"
_READ: Final = "read"
_TIMEOUTS: Final[dict[str, type[httpx.TimeoutException]]] = {
    _CONNECT: httpx.ConnectTimeout,
    _SEND: httpx.WriteTimeout,
    _READ: httpx.ReadTimeout,
}


class LoopTarget(Protocol):
    """What the loop needs of :class:`~evalkit.targets.http.HttpTarget`."""

    name: str
    timeout_s: float

    def prepare(self, case: GoldenCase) -> PreparedRequest: ...

    def interpret(
        self, case: GoldenCase, attempts: list[Attempt], latency_ms: float
    ) -> TargetResponse: ...


Answered = Callable[[int, "GoldenCase", "TargetResponse"], None]
Failed = Callable[[int, "GoldenCase", str], None]
TimedOut = Callable[[int, "GoldenCase"], None]


@dataclass(eq=False)
class _Case:
    """One case in flight."""

    index: int
    case: GoldenCase
    started: float  # monotonic: the case deadline runs from here
    wall_start: float  # epoch seconds and perf_counter: the latency's fallback clocks
    perf_start: float
    request: PreparedRequest | None = None
    attempts: list[Attempt] = field(default_factory=list)
    conn: _Connection | None = None
    addresses: list[tuple[int, tuple[Any, ...]]] = field(default_factory=list)
    phase: str = _CONNECT
    out: memoryview | None = None  # request bytes not yet sent
    reader: ReplyReader | None = None
    token: int = 0  # which network wait is current (older timers are stale)
    done: bool = False


class _Loop:
    def __init__(
        self,
        target: LoopTarget,
        pool: WirePool,
        cap: int,
        max_attempts: int,
        case_timeout_s: float | None,
        answered: Answered,
        failed: Failed,
        timed_out: TimedOut,
    ) -> None:
        self.target = target
        self.pool = pool
        self.cap = cap
        self.max_attempts = max_attempts
        self.case_timeout_s = case_timeout_s
        self.answered = answered
        self.failed = failed
        self.timed_out = timed_out
        self.selector = selectors.DefaultSelector()
        self.idle: list[_Connection] = []  # registered for reading: readable means closed
        self.owner: dict[_Connection, _Case] = {}
        self.timers: list[tuple[float, int, _Case, int]] = []  # (when, seq, case, token)
        self.seq = itertools.count()
        self.active = 0

    # -- connections -------------------------------------------------------------

    def adopt_idle(self, conns: Iterable[_Connection]) -> None:
        for conn in conns:
            self.selector.register(conn.sock, selectors.EVENT_READ, conn)
            self.idle.append(conn)

    def drop(self, conn: _Connection) -> None:
        self.owner.pop(conn, None)
        with contextlib.suppress(KeyError, ValueError):  # never registered, or closed
            self.selector.unregister(conn.sock)
        self.pool.drop(conn)

    def close(self) -> None:
        """Close what is in flight; hand idle connections back to the pool."""
        for conn in list(self.owner):
            self.drop(conn)
        for conn in self.idle:
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(conn.sock)
            self.pool.keep_idle(conn)
        self.idle = []
        self.selector.close()

    # -- timers ------------------------------------------------------------------

    def wait(self, c: _Case, phase: str) -> None:
        """``c`` now waits on the network in ``phase`` for at most ``timeout_s``."""
        c.phase = phase
        c.token += 1
        when = time.monotonic() + self.target.timeout_s
        heapq.heappush(self.timers, (when, next(self.seq), c, c.token))

    def next_timer(self) -> float | None:
        timers = self.timers
        while timers and _stale(timers[0][2], timers[0][3]):
            heapq.heappop(timers)  # that wait ended, or its case finished
        return timers[0][0] if timers else None

    def fire_timers(self, now: float) -> None:
        timers = self.timers
        while timers and timers[0][0] <= now:
            _, _, c, token = heapq.heappop(timers)
            if _stale(c, token):
                continue
            if token < 0:  # the case deadline
                self.expire(c)
            else:
                self.attempt_failed(c, _TIMEOUTS[c.phase]("timed out"))

    # -- one case ----------------------------------------------------------------

    def start(self, index: int, case: GoldenCase) -> None:
        now = time.monotonic()
        c = _Case(index, case, now, time.time(), time.perf_counter())
        self.active += 1
        if self.case_timeout_s is not None:
            # token -1 marks the deadline; a wait's token is positive, so never equal
            heapq.heappush(self.timers, (now + self.case_timeout_s, next(self.seq), c, -1))
        try:
            c.request = self.target.prepare(case)
        except BaseException as exc:
            self.end_with(c, exc)
            return
        self.begin_attempt(c)

    def begin_attempt(self, c: _Case) -> None:
        c.reader = None
        while self.idle:
            conn = self.idle.pop()
            if conn.stale():
                self.drop(conn)
                continue
            self.owner[conn] = c
            c.conn = conn
            self.send(c)
            return
        try:
            c.addresses = self.pool.addresses()
        except OSError as exc:
            self.attempt_done(c, Attempt(error=httpx.ConnectError(str(exc))))
            return
        self.connect_next(c, None)

    def connect_next(self, c: _Case, last: OSError | None) -> None:
        """Try the next address of the origin, as ``socket.create_connection`` would."""
        if c.conn is not None:
            self.drop(c.conn)
            c.conn = None
        while c.addresses:
            address = c.addresses.pop(0)
            try:
                conn, err = self.pool.open_nonblocking(address)
            except OSError as exc:
                last = exc
                continue
            if err in (0, errno.EINPROGRESS, errno.EWOULDBLOCK):
                c.conn = conn
                self.owner[conn] = c
                self.selector.register(conn.sock, selectors.EVENT_WRITE, conn)
                self.wait(c, _CONNECT)
                if _writable_now(conn.sock):
                    # Loopback connects complete within connect(): send at once, so the
                    # first round's latencies (timed from the connect) hold no wait for
                    # the loop to open the other connections.
                    self.connected(c, conn)
                return
            self.pool.drop(conn)
            last = OSError(err, os.strerror(err))
        message = str(last) if last is not None else "no address to connect to"
        self.attempt_done(c, Attempt(error=httpx.ConnectError(message)))

    def connected(self, c: _Case, conn: _Connection) -> None:
        err = conn.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if err:
            self.connect_next(c, OSError(err, os.strerror(err)))
            return
        self.selector.modify(conn.sock, selectors.EVENT_READ, conn)
        self.send(c)

    def send(self, c: _Case) -> None:
        conn = c.conn
        assert conn is not None
        assert c.request is not None
        try:
            out = self.pool.request_bytes(conn, c.request)
        except httpx.HTTPError as exc:
            self.attempt_failed(c, exc)
            return
        except Exception as exc:  # e.g. a header that is not ASCII: the case's row says so
            self.end_with(c, exc)
            return
        # The clock starts here (a new connection's: at its connect), as on the blocking path.
        conn.sent_at = time.time() if conn.used else conn.opened_at
        conn.used = True
        c.out = memoryview(out)
        c.reader = ReplyReader(self.cap, we_close=conn.we_close)
        self.write(c)

    def write(self, c: _Case) -> None:
        conn = c.conn
        assert conn is not None
        assert c.out is not None
        try:
            sent = conn.sock.send(c.out)
        except BlockingIOError:
            sent = 0
        except OSError as exc:
            self.attempt_failed(c, httpx.WriteError(str(exc)))
            return
        c.out = c.out[sent:]
        if c.out:
            if c.phase != _SEND:
                self.selector.modify(conn.sock, selectors.EVENT_WRITE, conn)
            self.wait(c, _SEND)
            return
        c.out = None
        if c.phase == _SEND:
            self.selector.modify(conn.sock, selectors.EVENT_READ, conn)
        self.wait(c, _READ)

    def readable(self, c: _Case, conn: _Connection) -> None:
        reader = c.reader
        assert reader is not None
        try:
            data, stamp = conn.recv()
        except BlockingIOError:
            return
        except OSError as exc:
            self.attempt_failed(c, httpx.ReadError(str(exc)))
            return
        try:
            reader.feed(data, stamp)
            complete = reader.advance()
            if complete:
                response, body, received_at = reader.response()
                decoded(response, body)
        except httpx.HTTPError as exc:
            self.attempt_failed(c, exc)
            return
        if not complete:
            self.wait(c, _READ)  # each read waits at most timeout_s, as with httpx
            return
        self.release(conn, reader)
        c.conn = None
        attempt = Attempt(response=response, started_at=conn.sent_at, received_at=received_at)
        self.attempt_done(c, attempt)

    def release(self, conn: _Connection, reader: ReplyReader) -> None:
        """Keep ``conn`` for the next case if both sides may go on, else close it."""
        self.owner.pop(conn, None)
        if reader.reusable:
            self.idle.append(conn)
            return
        self.drop(conn)

    def attempt_failed(self, c: _Case, error: httpx.HTTPError) -> None:
        conn = c.conn
        started = conn.sent_at if conn is not None and conn.used else None
        if conn is not None:
            self.drop(conn)
            c.conn = None
        self.attempt_done(c, Attempt(error=error, started_at=started))

    def attempt_done(self, c: _Case, attempt: Attempt) -> None:
        c.attempts.append(attempt)
        c.token += 1  # no network wait is pending now
        if attempt.retryable and len(c.attempts) < self.max_attempts:
            log_retry(attempt, len(c.attempts), self.max_attempts)
            self.begin_attempt(c)
            return
        elapsed_ms = (time.perf_counter() - c.perf_start) * 1000.0
        latency_ms = measured_latency_ms(c.attempts, c.wall_start, elapsed_ms)
        if self.late(c):
            self.expire(c)  # late: its answer is discarded, never interpreted
            return
        try:
            response = self.target.interpret(c.case, c.attempts, latency_ms)
        except BaseException as exc:
            self.end_with(c, exc)
            return
        self.finish(c)
        self.answered(c.index, c.case, response)

    def late(self, c: _Case) -> bool:
        return self.case_timeout_s is not None and (
            time.monotonic() - c.started >= self.case_timeout_s
        )

    def expire(self, c: _Case) -> None:
        if c.conn is not None:
            self.drop(c.conn)
            c.conn = None
        self.finish(c)
        self.timed_out(c.index, c.case)

    def end_with(self, c: _Case, exc: BaseException) -> None:
        """The row of a case whose prepare or interpret raised (as the threaded path words it)."""
        if c.conn is not None:
            self.drop(c.conn)
            c.conn = None
        self.finish(c)
        if isinstance(exc, RuntimeFailure):
            self.failed(c.index, c.case, str(exc))
        elif isinstance(exc, EvalkitError) or not isinstance(exc, Exception):
            raise exc
        else:
            name = self.target.name
            self.failed(c.index, c.case, f"target {name!r} raised {type(exc).__name__}: {exc}")

    def finish(self, c: _Case) -> None:
        c.done = True
        self.active -= 1

    # -- events ------------------------------------------------------------------

    def dispatch(self, conn: _Connection, mask: int) -> None:
        c = self.owner.get(conn)
        if c is None:  # an idle connection turned readable: the server closed it
            if conn in self.idle:
                self.idle.remove(conn)
                self.drop(conn)
            return
        if c.phase == _CONNECT:
            self.connected(c, conn)
        elif c.phase == _SEND:
            self.write(c)
        elif mask & selectors.EVENT_READ:
            self.readable(c, conn)


def _writable_now(sock: socket.socket) -> bool:
    """Whether a connecting socket is already connected (or failed): poll, no wait."""
    if not hasattr(select, "poll"):
        return False
    poller = select.poll()
    poller.register(sock, select.POLLOUT)
    return bool(poller.poll(0))


def _stale(c: _Case, token: int) -> bool:
    """A timer whose case finished, or whose network wait ended (the deadline's is -1)."""
    return c.done or (token >= 0 and token != c.token)


def run_cases(
    target: LoopTarget,
    pool: WirePool,
    jobs: Iterable[tuple[int, GoldenCase]],
    *,
    concurrency: int,
    cap: int,
    max_attempts: int,
    case_timeout_s: float | None,
    pace: Callable[[], float] | None,
    answered: Answered,
    failed: Failed,
    timed_out: TimedOut,
) -> None:
    """Run every job, at most ``concurrency`` at once, and report each case exactly once.

    ``pace()`` (the run's rate limit) returns 0 to let a case start now, or the seconds
    until one may.  ``answered`` gets the target's response (the caller scores it),
    ``failed`` a case's one-line error, ``timed_out`` a case past ``case_timeout_s``.
    An exception from a callback, or ``KeyboardInterrupt``, ends the run at once; every
    connection still waiting is closed.
    """
    loop = _Loop(target, pool, cap, max_attempts, case_timeout_s, answered, failed, timed_out)
    todo = deque(jobs)
    pace_until = 0.0
    try:
        loop.adopt_idle(pool.take_idle())
        while todo or loop.active:
            now = time.monotonic()
            while todo and loop.active < concurrency and now >= pace_until:
                if pace is not None:
                    wait = pace()
                    if wait > 0:
                        pace_until = now + wait
                        break
                loop.start(*todo.popleft())
            loop.fire_timers(time.monotonic())
            if not (todo or loop.active):
                break
            due = loop.next_timer()
            if todo and loop.active < concurrency:
                due = pace_until if due is None else min(due, pace_until)
            timeout = None if due is None else max(0.0, due - time.monotonic())
            for key, mask in loop.selector.select(timeout):
                loop.dispatch(key.data, mask)
    finally:
        loop.close()
