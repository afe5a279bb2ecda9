"""SIGINT and SIGTERM stop the CLI at once, whichever thread the kernel hands them to."""

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
    """Whether a nudge is out that the main thread has not yet answered."""

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
    """Record the answer: the main thread is running its handlers, so the relay can stop."""
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
    """Nudge the main thread for every SIGINT/SIGTERM the wakeup fd reports, until answered."""
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
    """SIGINT/SIGTERM raise in the main thread promptly, whichever thread receives them."""
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
    """End the process with ``code`` once stdout and stderr are flushed, skipping teardown."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
