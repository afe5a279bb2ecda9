"""SIGINT and SIGTERM stop the CLI at once, whichever thread the kernel hands them to.

Two facts make this module necessary:

* **Python runs signal handlers only in the main thread**, but the kernel delivers a
  process-directed signal to *any* thread that does not block it.  Every ``evalkit`` run
  has such threads: OpenBLAS starts native workers when numpy is imported, and the runner
  starts its own.  A signal that lands on one of them only sets CPython's "tripped" flag;
  the handler then waits until the main thread next runs bytecode, and a main thread
  asleep in ``recv`` on a silent target sleeps until the socket's timeout (120 s in the
  test that caught it).  ``docker stop`` and a cancelled GitHub job send SIGTERM once and
  SIGKILL a few seconds later, so such a wait loses the run's last checkpoint lines.
* **PID 1 gets no default action**: in a container evalkit is PID 1, and the kernel drops
  a signal PID 1 has no handler for, so SIGTERM needs an explicit handler.

:func:`guard` installs, for the span of one CLI invocation:

* handlers for SIGINT (``KeyboardInterrupt``) and SIGTERM (:class:`Terminated`, a
  ``KeyboardInterrupt``), so the same code that handles Ctrl-C (checkpoint kept, one stderr
  line) handles both;
* a *wakeup fd*: CPython's C-level handler, on whichever thread runs it, writes the signal
  number into a pipe;
* a *relay* thread that reads that pipe and sends :data:`NUDGE` to the main thread alone
  (``pthread_kill``).  Its only job is to interrupt whatever system call the main thread is
  sleeping in (``recv``, ``poll``, a lock wait), so the interpreter runs the pending
  handler there at once.  The nudge's own handler only records that it ran: a signal that
  reached the main thread directly is not handled twice.
* a *repeat* of the nudge until that record says the main thread has run its handlers.
  One nudge can be lost: the relay needs the GIL to send it, so it typically runs the
  moment the main thread releases the GIL on its way into ``poll``/``recv``; a nudge that
  lands in the microseconds between that release and the system call only sets the
  "tripped" flag, the call then blocks, and nothing interrupts it (about one signal test
  in a hundred hung this way until the timeout).  A repeated nudge finds the main thread
  inside the call and interrupts it.

Why not block SIGINT/SIGTERM in every other thread instead?  A signal sent to one thread
(``tgkill``) that blocks it stays pending on that thread for ever, so the run would never
stop; and a blocked mask is inherited across ``fork``/``exec``, so a program a target
starts from a worker thread would ignore Ctrl-C.  The relay answers a signal on any thread,
masked or not, and leaves every mask as it found it.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType

# The nudge: a signal evalkit sends only to its own main thread.  Any process-directed
# copy from outside is harmless: its handler does nothing.
NUDGE = signal.SIGUSR2 if hasattr(signal, "SIGUSR2") else None
_STOPS = (signal.SIGINT, signal.SIGTERM)
_STOP_RELAY = b"\xff"  # not a signal number: the relay's cue to end

_received = threading.Event()

RENUDGE_S = 0.02
"""How long the relay waits for the main thread to answer a nudge before sending another.

Short against the 1 s the tests allow for the report, long against a system call's
restart: a nudge that is answered costs one more wakeup at most."""


class _NudgeState:
    """Whether a nudge is out that the main thread has not yet answered.

    A plain attribute, not an Event: it is written from a signal handler, and an Event's
    lock could be held by the very frame the handler interrupted.  Reads and writes of one
    attribute are atomic under the GIL.
    """

    def __init__(self) -> None:
        self.unanswered = False


_nudge = _NudgeState()

Handler = Callable[[int, FrameType | None], object] | int | signal.Handlers | None


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived; handled exactly like SIGINT."""


def _on_sigterm(signum: int, frame: FrameType | None) -> None:  # noqa: ARG001
    _received.set()
    raise Terminated


def _on_nudge(signum: int, frame: FrameType | None) -> None:  # noqa: ARG001
    """Record the answer: the main thread is running its handlers, so the relay can stop.

    CPython runs every tripped handler in one pass, lowest signal first, so by the time this
    runs the SIGINT/SIGTERM handler has run too (or is raising, and this runs on the next
    check while the exception unwinds)."""
    _nudge.unanswered = False


def terminated() -> bool:
    """Whether SIGTERM (rather than SIGINT) ended the run: exit 143 instead of 130."""
    return _received.is_set()


def _relay(
    read_fd: int,
    nudge_main: Callable[[], None],
    state: _NudgeState,
    renudge_s: float = RENUDGE_S,
) -> None:
    """Nudge the main thread for every SIGINT/SIGTERM the wakeup fd reports, until answered.

    ``nudge_main`` sends the nudge; ``state.unanswered`` is cleared by the nudge's handler.
    While a nudge is unanswered the relay sends another every ``renudge_s``; the bytes the
    nudges themselves write to the wakeup fd are read and ignored.
    """
    stops = {int(s) for s in _STOPS}
    poller = select.poll()
    poller.register(read_fd, select.POLLIN)
    while True:
        timeout_ms = round(renudge_s * 1000) if state.unanswered else None
        if poller.poll(timeout_ms):
            try:
                data = os.read(read_fd, 64)
            except OSError:
                return  # the pipe was closed under us: the guard is gone
            if not data or _STOP_RELAY[0] in data:
                return
            if not stops.intersection(data):
                continue  # a nudge's own byte, or a signal the relay does not stop for
        elif not state.unanswered:
            continue
        # Marked before sending, so an answer that comes at once is not overwritten.
        state.unanswered = True
        try:
            nudge_main()
        except (OSError, ValueError):  # pragma: no cover - the main thread is gone
            return


@contextlib.contextmanager
def guard() -> Iterator[None]:
    """SIGINT/SIGTERM raise in the main thread promptly, whichever thread receives them.

    A no-op off the main thread (only the main thread may install handlers) and on
    platforms without ``pthread_kill`` (there only the handlers are installed).  Restores
    the previous handlers and wakeup fd on exit, so :func:`evalkit.cli.main` can be called
    in-process any number of times.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _received.clear()
    _nudge.unanswered = False
    previous: dict[int, Handler] = {
        int(s): signal.signal(s, h)
        for s, h in (
            (signal.SIGTERM, _on_sigterm),
            (signal.SIGINT, signal.default_int_handler),
        )
    }
    relay: threading.Thread | None = None
    read_fd = write_fd = -1
    previous_wakeup = -1
    try:
        if NUDGE is not None and hasattr(signal, "pthread_kill"):
            read_fd, write_fd = os.pipe()
            os.set_blocking(write_fd, False)  # set_wakeup_fd requires a non-blocking fd
            previous[int(NUDGE)] = signal.signal(NUDGE, _on_nudge)
            previous_wakeup = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
            main_ident, nudge = threading.get_ident(), int(NUDGE)
            relay = threading.Thread(
                target=_relay,
                args=(read_fd, lambda: signal.pthread_kill(main_ident, nudge), _nudge),
                name="evalkit-signal-relay",
                daemon=True,
            )
            relay.start()
        yield
    finally:
        if relay is not None:
            signal.set_wakeup_fd(previous_wakeup)
            with contextlib.suppress(OSError):
                os.write(write_fd, _STOP_RELAY)
            relay.join()
        for fd in (read_fd, write_fd):
            if fd >= 0:
                os.close(fd)
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)


def exit_now(code: int) -> None:
    """End the process with ``code`` once stdout and stderr are flushed, skipping teardown.

    After an interruption the checkpoint is already on disk (each row is fsync'd as it is
    written); what is left is interpreter teardown, measured at 6-9 s on a starved runner,
    most of GitHub's 7.5 s between SIGTERM and SIGKILL.  Worker threads still blocked in a
    target's ``recv`` would only add to it.
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
