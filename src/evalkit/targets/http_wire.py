"""HttpTarget's lean path for plain ``http://``: pooled sockets, own codec, kernel receive times.

Why not httpx here: under concurrency httpx costs the client 0.55-0.65 ms of CPU
per request (its pool bookkeeping under one lock, request/URL/header models),
and ``httpx.AsyncClient`` more (1.2-5 ms at c=32-64), so at c=64 against a 20 ms
service the client's own CPU, not the service, set the pace and the latencies
(``docs/design/concurrency.md``).  This path sends the same request over a
pooled keep-alive socket and parses the reply with :mod:`evalkit.targets.http_codec`
(h11's rules at a fraction of its CPU, #27).  :meth:`WirePool.send` is the blocking
path (one call, one thread); a run's cases go through :mod:`evalkit.targets.http_loop`
instead, on one thread, over the same pool and codec.  It keeps
httpx's contract: an :class:`~evalkit.targets.http_exchange.Attempt`
holding an ``httpx.Response`` (decoded and size-capped the same way) or the same
httpx exception types, so retry, error wording and ``interpret`` do not change.

The end of a case's latency is the moment the kernel received the reply's last
bytes (``SO_TIMESTAMPNS`` on Linux), not the moment the worker thread was
scheduled again to read them: a client busy with other cases no longer adds its
own queueing to the target's latency.  Where the kernel gives no timestamp the
attempt carries none and the caller's clock is used.

It is used only where it sends what httpx would (the same request line, body
and headers, with its own User-Agent): ``http://`` without credentials in the
URL, no ``client=`` passed, and no proxy set for the host in the environment
(httpx would honour it).  Everything else goes through httpx.
"""

from __future__ import annotations

import contextlib
import select
import socket
import struct
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar
from urllib.parse import urlsplit

import httpx

from evalkit.targets.http_codec import ReplyReader, asks_to_close, request_bytes
from evalkit.targets.http_exchange import Attempt, PreparedRequest, read_capped

_T = TypeVar("_T")

__all__ = ["WirePool", "wire_eligible"]

# Linux's SO_TIMESTAMPNS (SO_TIMESTAMPNS_OLD: a struct timespec of two longs);
# Python's socket module does not export it.  Elsewhere: no kernel timestamps.
SO_TIMESTAMPNS: Final[int | None] = getattr(
    socket, "SO_TIMESTAMPNS", 35 if sys.platform == "linux" else None
)
_TIMESPEC: Final = struct.Struct("@qq")
_ANCILLARY: Final = socket.CMSG_SPACE(_TIMESPEC.size) if hasattr(socket, "CMSG_SPACE") else 0
_READ: Final = 65536
USER_AGENT: Final = "evalkit (http_wire)"
DEFAULT_IDLE: Final = 20  # idle connections kept before expect_concurrency sizes the pool


def wire_eligible(url: str, has_client: bool) -> bool:
    """True when the lean path sends what httpx would (see the module doc)."""
    parts = urlsplit(url)
    if has_client or parts.scheme != "http" or parts.username or parts.password:
        return False
    host = parts.hostname or ""
    proxies = urllib.request.getproxies_environment()
    if ("http" in proxies or "all" in proxies) and not urllib.request.proxy_bypass(host):
        return False
    return bool(host)


_TIMEVAL: Final = struct.Struct("@ll")


def _kernel_timeouts(sock: socket.socket, timeout_s: float) -> None:
    """Let the kernel time out each send and receive (SO_SNDTIMEO / SO_RCVTIMEO).

    A Python-level timeout makes every send and receive a poll() plus the call,
    each releasing and retaking the interpreter lock: under concurrency those
    handoffs, not the HTTP work, were most of the client's CPU per request.
    A blocking socket with kernel timeouts makes one call; a timed-out call
    raises ``BlockingIOError`` (see :func:`_io`).  Where the options are not
    available (or the timeval layout is not Linux's), Python's timeout stays.
    """
    if sys.platform != "linux":
        sock.settimeout(timeout_s)
        return
    seconds = int(timeout_s)
    micros = round((timeout_s - seconds) * 1e6)
    if seconds == 0 and micros == 0:
        micros = 1  # 0 would mean "never time out"
    timeval = _TIMEVAL.pack(seconds, micros)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, timeval)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, timeval)
    except OSError:
        sock.settimeout(timeout_s)
        return
    sock.settimeout(None)


class _Connection:
    """One keep-alive HTTP/1.1 connection, used by one request at a time."""

    def __init__(
        self, host: str, port: int, timeout_s: float, sock: socket.socket | None = None
    ) -> None:
        """Connect (blocking), or adopt ``sock``: a non-blocking socket still connecting."""
        self.opened_at = time.time()  # a fresh connection's first request is timed from here
        self.sent_at: float | None = None  # when the current request started (wall clock)
        self.used = False
        self.sock = socket.create_connection((host, port), timeout_s) if sock is None else sock
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        _kernel_timeouts(self.sock, timeout_s)
        if sock is not None:
            self.sock.setblocking(False)  # _kernel_timeouts made it blocking
        self.stamped = False
        if SO_TIMESTAMPNS is not None and _ANCILLARY:
            with contextlib.suppress(OSError):
                self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
                self.stamped = True
        self.we_close = False  # the current request asked the server to close

    def stale(self) -> bool:
        """An idle connection the server closed (or wrote to unasked) must not be reused."""
        try:
            if hasattr(select, "poll"):  # select() refuses descriptors above 1023
                poller = select.poll()
                poller.register(self.sock, select.POLLIN)
                return bool(poller.poll(0))
            readable, _, _ = select.select([self.sock], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)

    def recv(self) -> tuple[bytes, float | None]:
        """The next bytes, and when the kernel received them (epoch seconds) if it says."""
        if not self.stamped:
            return self.sock.recv(_READ), None
        data, ancillary, _flags, _addr = self.sock.recvmsg(_READ, _ANCILLARY)
        stamp = None
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                seconds, nanos = _TIMESPEC.unpack(payload[: _TIMESPEC.size])
                stamp = seconds + nanos / 1e9
        return data, stamp

    def close(self) -> None:
        # shutdown() first: it wakes a thread still blocked reading this socket (an
        # abandoned, timed-out case), which close() alone would leave waiting.
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self.sock.close()


def _timestamp_keeper() -> socket.socket | None:
    """A socket asking for receive timestamps, so the kernel keeps them on; or ``None``."""
    if SO_TIMESTAMPNS is None:
        return None
    keeper = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        keeper.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    except OSError:
        keeper.close()
        return None
    return keeper


class WirePool:
    """Keep-alive connections to one ``http://`` origin, handed out one request at a time.

    The most recently used idle connection goes first (it is the one most likely
    still open).  At most ``keepalive`` idle connections are kept; the number in
    use is not capped (the executor caps requests in flight, as for httpx).
    """

    def __init__(self, url: str, timeout_s: float) -> None:
        parts = urlsplit(url)
        self.host: str = parts.hostname or ""
        self.port: int = parts.port or 80
        self.timeout_s = timeout_s
        default_port = parts.port is None or parts.port == 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        self.host_header = host if default_port else f"{host}:{self.port}"
        self._raw_path = httpx.URL(url).raw_path  # parsed once: httpx.URL costs ~15% of a request
        self._raw_path_only = self._raw_path.partition(b"?")[0]
        self.keepalive = DEFAULT_IDLE
        self.opened = 0
        self._idle: list[_Connection] = []
        self._lock = threading.Lock()
        self._closed = False
        self._live: set[_Connection] = set()
        self._keeper: socket.socket | None = None  # see expect()

    def expect(self, concurrency: int) -> None:
        """Keep ``concurrency`` idle connections; switch kernel timestamps on ahead of the run.

        The kernel turns packet timestamping on shortly *after* a socket first asks
        (deferred work), and off again once no socket wants it, so without this a run's
        first round of replies (a whole round at c=128) would carry no receive time.
        One stamped UDP socket, held until :meth:`close`, asks before any case starts.
        """
        with self._lock:
            self.keepalive = max(self.keepalive, concurrency)
            if self._keeper is None and not self._closed:
                self._keeper = _timestamp_keeper()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            live, self._live, self._idle = list(self._live), set(), []
            keeper, self._keeper = self._keeper, None
        for conn in live:
            conn.close()
        if keeper is not None:
            keeper.close()

    def _acquire(self, timeout_s: float) -> _Connection:
        while True:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None:
                break
            if conn.stale():
                self._drop(conn)
                continue
            return conn
        conn = _Connection(self.host, self.port, timeout_s)
        self._count_opened(conn)
        return conn

    def _count_opened(self, conn: _Connection) -> None:
        with self._lock:
            self.opened += 1
            self._live.add(conn)
            closed = self._closed
        if closed:  # closed while connecting: do not leave it open
            self._drop(conn)

    def _release(self, conn: _Connection, reply: ReplyReader) -> None:
        if reply.reusable:
            with self._lock:
                if not self._closed and len(self._idle) < self.keepalive:
                    self._idle.append(conn)
                    return
        self._drop(conn)

    def _drop(self, conn: _Connection) -> None:
        with self._lock:
            self._live.discard(conn)
        conn.close()

    # -- for the one-thread loop (evalkit.targets.http_loop) -----------------------

    def take_idle(self) -> list[_Connection]:
        """Hand every idle connection to the caller (made non-blocking), most recent last."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.sock.setblocking(False)
        return idle

    def keep_idle(self, conn: _Connection) -> None:
        """Take back a connection between requests (made blocking again), or close it."""
        conn.sock.setblocking(True)  # its kernel timeouts (SO_RCVTIMEO/SO_SNDTIMEO) remain
        with self._lock:
            if not self._closed and len(self._idle) < self.keepalive:
                self._idle.append(conn)
                return
        self._drop(conn)

    def open_nonblocking(self, address: tuple[int, tuple[Any, ...]]) -> tuple[_Connection, int]:
        """A connection to ``address`` (family, sockaddr) being opened; connect_ex's errno."""
        family, sockaddr = address
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            conn = _Connection(self.host, self.port, self.timeout_s, sock=sock)
            err = sock.connect_ex(sockaddr)
        except BaseException:
            sock.close()
            raise
        self._count_opened(conn)
        return conn, err

    def addresses(self) -> list[tuple[int, tuple[Any, ...]]]:
        """Where the origin may be reached (family, sockaddr), in create_connection's order."""
        found = socket.getaddrinfo(self.host, self.port, 0, socket.SOCK_STREAM)
        return [(family, sockaddr) for family, _, _, _, sockaddr in found]

    def drop(self, conn: _Connection) -> None:
        """Close a connection that must not be reused."""
        self._drop(conn)

    def request_target(self, params: Mapping[str, Any] | None) -> bytes:
        """The request line's target: what ``URL.copy_with(params=...).raw_path`` gives.

        As httpx's build_request does, GET parameters replace the url's own query
        (an empty encoding still leaves the ``?``).  Encoded by httpx's own
        ``QueryParams``, but without re-parsing the whole URL per case (5x cheaper).
        """
        if not params:
            return self._raw_path
        return self._raw_path_only + b"?" + str(httpx.QueryParams(params)).encode("ascii")

    def send(self, request: PreparedRequest, cap: int) -> Attempt:
        """Send ``request``; an :class:`Attempt` like :func:`~evalkit.targets.http.send_once`'s."""
        timeout_s = _timeout_s(request.timeout)
        try:
            conn = self._acquire(timeout_s)
        except TimeoutError as exc:
            return Attempt(error=httpx.ConnectTimeout(str(exc) or "timed out"))
        except OSError as exc:
            return Attempt(error=httpx.ConnectError(str(exc)))
        try:
            reply = self._exchange(conn, request, cap)
            response, body, received_at = reply.response()
            decoded(response, body)
        except httpx.HTTPError as exc:
            self._drop(conn)
            return Attempt(error=exc, started_at=conn.sent_at)
        except BaseException:
            self._drop(conn)
            raise
        self._release(conn, reply)
        return Attempt(response=response, started_at=conn.sent_at, received_at=received_at)

    def request_bytes(self, conn: _Connection, request: PreparedRequest) -> bytes:
        """The request's bytes, with the headers httpx would send (``http_codec`` frames them)."""
        # The defaults httpx would send; a header of the same name from the target replaces one.
        fields = {"host": self.host_header, "user-agent": USER_AGENT}
        fields["accept-encoding"] = "gzip, deflate"
        fields.update((k.lower(), v) for k, v in request.headers.items())
        if request.content is not None:
            fields["content-length"] = str(len(request.content))
        headers = list(fields.items())
        conn.we_close = asks_to_close(headers)
        target = self.request_target(request.params)
        return request_bytes(request.method, target, headers, request.content)

    def _exchange(self, conn: _Connection, request: PreparedRequest, cap: int) -> ReplyReader:
        """The complete reply, read."""
        out = self.request_bytes(conn, request)
        # The clock starts here, not before the pool hand-out: waiting for the
        # interpreter lock around that is the client's time (a new connection's
        # connect is the target's, as with httpx).
        conn.sent_at = time.time() if conn.used else conn.opened_at
        conn.used = True
        _io(lambda: conn.sock.sendall(out), httpx.WriteTimeout, httpx.WriteError)
        reply = ReplyReader(cap, we_close=conn.we_close)
        while not reply.advance():
            data, stamp = _io(conn.recv, httpx.ReadTimeout, httpx.ReadError)
            reply.feed(data, stamp)
        return reply


def decoded(response: httpx.Response, body: bytes) -> None:
    """Give ``response`` its content: decoded (gzip, deflate) and capped as httpx would."""
    if "content-encoding" in response.headers:
        read_capped(response)
    else:  # no decoding to do: the body as read, already capped, is the content
        response._content = body


def _timeout_s(timeout: httpx.Timeout) -> float:
    values = [t for t in (timeout.connect, timeout.read, timeout.write) if t is not None]
    return min(values) if values else 3600.0


def _content_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    for name, value in headers:
        if name == b"content-length" and value.isdigit():
            return int(value)
    return None


def _io(
    call: Callable[[], _T],
    on_timeout: type[httpx.TimeoutException],
    on_error: type[httpx.HTTPError],
) -> _T:
    """``call()`` with socket failures as the httpx exceptions httpx itself would raise."""
    try:
        return call()
    except (TimeoutError, BlockingIOError) as exc:  # BlockingIOError: SO_RCVTIMEO/SO_SNDTIMEO
        raise on_timeout("timed out") from exc
    except OSError as exc:
        raise on_error(str(exc)) from exc
