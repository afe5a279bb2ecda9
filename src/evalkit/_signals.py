"""SIGTERM handled like Ctrl-C, so ``docker stop`` (and a cancelled job) stops evalkit.

In a container evalkit is PID 1, and the kernel drops signals PID 1 has no handler for:
without one, ``docker stop`` waits its 10 s and then kills, and nothing is cleaned up.
With this handler SIGTERM raises :class:`Terminated` (a ``KeyboardInterrupt``) in the main
thread, so the same code that handles Ctrl-C (checkpoint kept, one stderr line) runs.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

_received = threading.Event()


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived; handled exactly like SIGINT."""


def _on_sigterm(signum: int, frame: FrameType | None) -> None:  # noqa: ARG001
    _received.set()
    raise Terminated


def handle_sigterm_like_sigint() -> None:
    """Install the handler (main thread only: Python delivers signals there)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)


def terminated() -> bool:
    """Whether SIGTERM (rather than SIGINT) ended the run: exit 143 instead of 130."""
    return _received.is_set()
