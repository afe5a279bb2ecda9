"""SIGINT and SIGTERM stop a blocked run at once, on whichever thread they land.

A process-directed signal goes to any thread that does not block it, and Python runs
handlers only in the main thread: a signal on OpenBLAS's worker, a case worker or the relay
used to wait until the main thread's ``recv`` timed out (120 s here).  Each test blocks a
real ``evalkit`` process on a silent target (it accepts and never answers) and sends the
signal only once the target has accepted every connection the run will make, so the run is
provably asleep in ``recv``: nothing depends on timing luck, and the bounds below (1 s to
the report, 10 s to the exit: ``docker stop``'s grace period) are a hundredth of the
timeout they tell apart from.  ``tgkill`` picks the thread, so the test does not depend on
which one the kernel would have chosen.

``scripts/stress_signals.py`` repeats the thread-directed case 100 times under CPU load.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import socket
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evalkit._util import signals as _signals
from helpers.child_evidence import this_process_threads
from signal_harness import (
    Blocked,
    SilentTarget,
    can_tgkill,
    expected_status,
    silent_target,
    start_blocked,
    tgkill,
    threads,
)

REPORT_BOUND_S = 1.0
EXIT_BOUND_S = 10.0  # docker stop's grace period
SIGNALS = pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])


@pytest.fixture
def target() -> Iterator[SilentTarget]:
    with silent_target() as server:
        yield server


def _can_unshare() -> bool:
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    probe = subprocess.run(
        [unshare, "--pid", "--fork", "--kill-child", "true"], capture_output=True, check=False
    )
    return probe.returncode == 0


def _assert_stopped_promptly(blocked_sig: int, sent_at: float, blocked: Blocked) -> None:
    """It exited with 128 + the signal, said so on stderr within 1 s, ended within 10 s."""
    try:
        status, ended = blocked.finish(timeout_s=30)
    finally:
        blocked.proc.kill()
        blocked.proc.wait()
    stderr = blocked.stderr
    # unshare --fork reports the child's exit status as its own.
    assert status == expected_status(blocked_sig), (status, stderr)
    assert "Traceback" not in stderr
    reported = blocked.reported_at()
    assert reported is not None, f"no interruption line on stderr: {stderr!r}"
    assert reported - sent_at < REPORT_BOUND_S, f"reported after {reported - sent_at:.2f} s"
    assert ended - sent_at < EXIT_BOUND_S, f"ended after {ended - sent_at:.2f} s"


@pytest.mark.parametrize("as_pid1", [False, True], ids=["process", "pid1"])
@SIGNALS
def test_a_process_signal_stops_a_blocked_run_promptly(
    tmp_path: Path, target: SilentTarget, as_pid1: bool, sig: signal.Signals
) -> None:
    """``kill PID`` (docker stop, a cancelled job), also when evalkit is PID 1."""
    if as_pid1 and not _can_unshare():
        pytest.skip("unshare --pid is not permitted here (needs root or user namespaces)")
    blocked = start_blocked(tmp_path, target, command="run", concurrency=1, as_pid1=as_pid1)
    sent_at = time.monotonic()
    os.kill(blocked.pid, sig)
    _assert_stopped_promptly(sig, sent_at, blocked)


def _thread_directed_cases() -> list[Any]:
    """All 16 combinations; the fast tier runs a covering four, the slow tier the rest.

    Each run is a whole ``evalkit`` process (about 2 s), so the fast tier keeps one case per
    command and concurrency, chosen so that each signal meets each of the two threads once:
    every factor and every signal-thread pair is still exercised on each test run.
    """
    runs = [("run", 1), ("run", 3), ("gate", 1), ("gate", 3)]
    covering = {
        ("run", 1, "oldest", "SIGTERM"),
        ("run", 3, "newest", "SIGTERM"),
        ("gate", 1, "newest", "SIGINT"),
        ("gate", 3, "oldest", "SIGINT"),
    }
    cases = []
    for command, concurrency in runs:
        for which in ("oldest", "newest"):
            for sig in (signal.SIGTERM, signal.SIGINT):
                key = (command, concurrency, which, sig.name)
                marks = () if key in covering else (pytest.mark.slow,)
                ident = f"{sig.name}-{which}-{command}" + ("-c3" if concurrency == 3 else "")
                cases.append(pytest.param(command, concurrency, which, sig, marks=marks, id=ident))
    return cases


@pytest.mark.skipif(not can_tgkill(), reason="tgkill is Linux-only")
@pytest.mark.parametrize(("command", "concurrency", "which", "sig"), _thread_directed_cases())
def test_a_signal_on_another_thread_stops_a_blocked_run_promptly(
    tmp_path: Path,
    target: SilentTarget,
    command: str,
    concurrency: int,
    which: str,
    sig: signal.Signals,
) -> None:
    """The signal lands on a thread other than the main one.

    The oldest non-main thread is the signal relay or a native one (OpenBLAS's worker,
    started by importing numpy); the newest is whichever started last (at concurrency 3
    the lean HTTP path runs every case on the main thread, so no case worker is needed:
    the target has accepted all 3 connections, the run is blocked on all of them).
    """
    blocked = start_blocked(tmp_path, target, command=command, concurrency=concurrency)
    others = threads(blocked.pid)[1:]
    assert others, "an evalkit run always has more than one thread (the relay at least)"
    tid = others[0] if which == "oldest" else others[-1]
    sent_at = time.monotonic()
    tgkill(blocked.pid, tid, sig)
    _assert_stopped_promptly(sig, sent_at, blocked)


@pytest.mark.slow  # one run per thread; the fast tier tries the oldest and the newest
@pytest.mark.skipif(not can_tgkill(), reason="tgkill is Linux-only")
@SIGNALS
def test_every_thread_of_a_blocked_run_hands_the_signal_on(
    tmp_path: Path, target: SilentTarget, sig: signal.Signals
) -> None:
    """Each thread in turn (one run per thread), so no thread is left untried."""
    first = start_blocked(tmp_path / "probe", target, command="run", concurrency=2)
    count = len(threads(first.pid))
    first.proc.kill()
    first.proc.wait()
    for index in range(1, count):
        with silent_target() as server:
            blocked = start_blocked(tmp_path / f"t{index}", server, command="run", concurrency=2)
            tids = threads(blocked.pid)
            if index >= len(tids):
                blocked.proc.kill()
                blocked.proc.wait()
                continue
            sent_at = time.monotonic()
            tgkill(blocked.pid, tids[index], sig)
            _assert_stopped_promptly(sig, sent_at, blocked)


# --- the guard in-process: the relay, and everything put back ---------------------------


@pytest.fixture
def silent_peer() -> Iterator[socket.socket]:
    """A connected socket whose peer never writes: ``recv`` on it blocks."""
    a, b = socket.socketpair()
    a.settimeout(30)
    yield a
    a.close()
    b.close()


def _send_from_another_thread(sig: int, to: str) -> threading.Thread:
    """A thread that sends ``sig`` to itself (``to='self'``) or to an idle thread."""
    idle = threading.Event()
    sleeper = threading.Thread(target=idle.wait, daemon=True)
    sleeper.start()

    def send() -> None:
        ident = threading.get_ident() if to == "self" else sleeper.ident
        assert ident is not None
        signal.pthread_kill(ident, sig)
        idle.set()

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    return sender


@pytest.mark.skipif(_signals.NUDGE is None, reason="no SIGUSR2 here")
@pytest.mark.parametrize("to", ["self", "idle"])
def test_the_guard_raises_in_the_main_thread_blocked_in_recv(
    silent_peer: socket.socket, to: str
) -> None:
    def send_then_block() -> None:
        with _signals.guard():
            _send_from_another_thread(signal.SIGTERM, to)
            silent_peer.recv(1)  # blocks for 30 s unless the main thread is nudged

    started = time.monotonic()
    with pytest.raises(_signals.Terminated):
        send_then_block()
    assert time.monotonic() - started < 10
    assert _signals.terminated()


@pytest.mark.skipif(_signals.NUDGE is None, reason="no SIGUSR2 here")
def test_a_signal_on_the_relay_thread_is_handed_on_too(silent_peer: socket.socket) -> None:
    def signal_the_relay_then_block() -> None:
        with _signals.guard():
            (relay,) = [t for t in threading.enumerate() if t.name == "evalkit-signal-relay"]
            assert relay.ident is not None
            signal.pthread_kill(relay.ident, signal.SIGINT)
            silent_peer.recv(1)

    with pytest.raises(KeyboardInterrupt):
        signal_the_relay_then_block()
    assert not _signals.terminated()


def test_the_guard_puts_everything_back() -> None:
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGUSR2)}
    with _signals.guard():
        assert signal.getsignal(signal.SIGTERM) is not before[signal.SIGTERM]
    assert {s: signal.getsignal(s) for s in before} == before
    previous_wakeup = signal.set_wakeup_fd(-1)
    assert previous_wakeup == -1  # the wakeup fd is released, not left pointing at a pipe
    assert not [t for t in threading.enumerate() if t.name == "evalkit-signal-relay"]


def test_the_guard_is_a_no_op_off_the_main_thread() -> None:
    seen: list[object] = []

    def body() -> None:
        with _signals.guard():
            seen.append(signal.getsignal(signal.SIGTERM))

    before = signal.getsignal(signal.SIGTERM)
    worker = threading.Thread(target=body)
    worker.start()
    worker.join()
    assert seen == [before]


# --- the relay repeats a nudge the main thread did not answer ---------------------------
#
# A nudge can land in the microseconds between the main thread releasing the GIL and
# entering its system call; it then only sets CPython's "tripped" flag and the call blocks
# until its timeout.  The relay therefore repeats the nudge until the nudge's handler has
# run.  These drive ``_relay`` itself with a stand-in for ``pthread_kill`` that loses the
# first nudges, which no real process can be made to do on demand.


class _Relay:
    """``_relay`` on its own thread, fed through a real pipe, nudging a stand-in."""

    def __init__(self, lose: int, renudge_s: float = 0.001) -> None:
        self.read_fd, self.write_fd = os.pipe()
        self.state = _signals._NudgeState()
        self.sent: list[float] = []
        self.lose = lose
        self.answered = threading.Event()
        self.thread = threading.Thread(
            target=_signals._relay, args=(self.read_fd, self._nudge, self.state, renudge_s)
        )
        self.thread.start()

    def _nudge(self) -> None:
        self.sent.append(time.monotonic())
        if len(self.sent) > self.lose:  # this one interrupts the call: the handler answers
            self.state.unanswered = False
            self.answered.set()

    def feed(self, data: bytes) -> None:
        """Write ``data`` and wait until the relay has read all of it (so reads are apart)."""
        os.write(self.write_fd, data)
        deadline = time.monotonic() + 10
        while _pending_bytes(self.read_fd) and time.monotonic() < deadline:
            time.sleep(0.001)

    def signal(self, sig: int) -> None:
        self.answered.clear()
        os.write(self.write_fd, bytes([sig]))
        if not self.answered.wait(10):
            raise AssertionError(
                f"no answered nudge after {len(self.sent)} sent\n{this_process_threads()}"
            )

    def stop(self) -> None:
        os.write(self.write_fd, _signals._STOP_RELAY)
        self.thread.join(10)
        assert not self.thread.is_alive(), f"the relay did not stop\n{this_process_threads()}"
        for fd in (self.read_fd, self.write_fd):
            os.close(fd)


def _pending_bytes(fd: int) -> int:
    return int(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0])


@pytest.mark.skipif(_signals.NUDGE is None, reason="no SIGUSR2 here")
@pytest.mark.parametrize("lose", [0, 1, 5])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_lost_nudge_is_sent_again_until_the_main_thread_answers(
    lose: int, sig: signal.Signals
) -> None:
    relay = _Relay(lose)
    try:
        relay.signal(sig)
        assert len(relay.sent) == lose + 1
        # Answered: the nudges' own bytes must not start another round, and the next
        # signal gets exactly one nudge (the stand-in answers every nudge after the lost).
        assert _signals.NUDGE is not None
        relay.feed(bytes([_signals.NUDGE]) * 3)
        relay.signal(sig)
        assert len(relay.sent) == lose + 2
    finally:
        relay.stop()


@pytest.mark.skipif(_signals.NUDGE is None, reason="no SIGUSR2 here")
def test_the_nudges_own_bytes_and_other_signals_never_start_a_nudge() -> None:
    assert _signals.NUDGE is not None
    relay = _Relay(lose=0)
    try:
        relay.feed(bytes([_signals.NUDGE, signal.SIGUSR1, signal.SIGCHLD]))
        assert relay.sent == []
        relay.signal(signal.SIGTERM)  # the relay is still there and answers a stop
        assert len(relay.sent) == 1
    finally:
        relay.stop()
