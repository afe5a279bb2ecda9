"""A real ``evalkit run`` / ``gate`` blocked on a silent target, and signals sent into it.

Shared by ``tests/cli/test_cli_signals.py`` and the stress command
``scripts/stress_signals.py``.  Nothing here waits on a guess: the signal is sent once the
target has *accepted* every connection the run will make, so the run is blocked in a
``recv`` whose timeout (:data:`TARGET_TIMEOUT_S`) is far beyond any bound a test checks.
A wait that runs out (start-up, exit) fails with each thread's ``/proc`` status and
stack and every thread's Python traceback (:mod:`helpers.child_evidence`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from helpers.child_evidence import FAULTHANDLER_ENV, START_BOUND_S, timed_out

TARGET_TIMEOUT_S = 120
CHECKS = "checks:\n  - id: floor\n    metric: recall@1\n    op: '>='\n    threshold: 0.5\n"
# The signal report on stderr: run says "interrupted ..." or "terminated (SIGTERM) ...".
REPORT_WORDS = ("interrupted", "terminated")

_SYS_TGKILL = {"x86_64": 234, "aarch64": 131, "arm64": 131}.get(platform.machine())


def can_tgkill() -> bool:
    """Whether this machine lets us signal one thread of another process (Linux only)."""
    return sys.platform == "linux" and _SYS_TGKILL is not None


def tgkill(pid: int, tid: int, sig: int) -> None:
    """Send ``sig`` to thread ``tid`` of process ``pid`` alone (what the kernel may pick)."""
    assert _SYS_TGKILL is not None
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(_SYS_TGKILL, pid, tid, sig) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))


def threads(pid: int) -> list[int]:
    """The ids of ``pid``'s threads, the main thread (whose id is ``pid``) first."""
    tids = sorted(int(t) for t in os.listdir(f"/proc/{pid}/task"))
    return [pid, *(t for t in tids if t != pid)]


class SilentTarget:
    """A TCP server that accepts connections and never answers."""

    def __init__(self) -> None:
        self._server = socket.socket()
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(16)
        self.port: int = self._server.getsockname()[1]
        self._held: list[socket.socket] = []
        self._lock = threading.Condition()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            with self._lock:
                self._held.append(conn)
                self._lock.notify_all()

    def wait_for(self, connections: int, timeout_s: float) -> bool:
        """Whether ``connections`` connections were accepted within ``timeout_s``."""
        with self._lock:
            return self._lock.wait_for(lambda: len(self._held) >= connections, timeout_s)

    def close(self) -> None:
        self._server.close()
        with self._lock:
            for conn in self._held:
                conn.close()


@contextlib.contextmanager
def silent_target() -> Iterator[SilentTarget]:
    target = SilentTarget()
    try:
        yield target
    finally:
        target.close()


def write_project(root: Path, port: int, *, cases: int, concurrency: int) -> Path:
    """An evalkit project whose HTTP target is ``127.0.0.1:port``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "goldens.jsonl").write_text(
        "".join(f'{{"id": "q{i}", "query": "q {i}", "relevant": ["d1"]}}\n' for i in range(cases))
    )
    (root / "checks.yaml").write_text(CHECKS)
    (root / "evalkit.yaml").write_text(
        "goldens: goldens.jsonl\nchecks: checks.yaml\nmetrics: [recall@1]\n"
        f"concurrency: {concurrency}\n"
        "target:\n"
        f"  http: {{url: 'http://127.0.0.1:{port}/s', extract: 'ids', "
        f"timeout_s: {TARGET_TIMEOUT_S}}}\n"
    )
    return root


COMMANDS: dict[str, list[str]] = {
    "run": ["run", "--out", "run.json"],
    "gate": ["gate", "--config", "evalkit.yaml"],
}


@dataclass
class Blocked:
    """A started evalkit process, blocked on the silent target."""

    proc: subprocess.Popen[str]
    pid: int  # the evalkit process (under unshare: the wrapper's child)
    _lines: list[tuple[float, str]] = field(default_factory=list)
    _reader: threading.Thread | None = None

    def start_reading(self) -> None:
        assert self.proc.stderr is not None
        stderr = self.proc.stderr

        def read() -> None:
            for line in stderr:
                self._lines.append((time.monotonic(), line))

        self._reader = threading.Thread(target=read, daemon=True)
        self._reader.start()

    def finish(self, timeout_s: float) -> tuple[int, float]:
        """(exit status, when it ended) once the process has ended; past ``timeout_s``, a
        failure with what each of its threads was doing (helpers.child_evidence)."""
        try:
            self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise self.timed_out("the signalled process to end", timeout_s) from None
        ended = time.monotonic()
        if self._reader is not None:
            self._reader.join(timeout_s)
        return self.proc.returncode, ended

    @property
    def stderr(self) -> str:
        return "".join(line for _, line in self._lines)

    def timed_out(self, what: str, bound_s: float) -> AssertionError:
        def everything_said() -> str:
            if self._reader is not None:
                self._reader.join(30)  # the child has ended: its stderr closes
            return self.stderr

        return timed_out(what, self.proc, bound_s, everything_said)

    def reported_at(self) -> float | None:
        """When the first line saying the run was stopped reached stderr."""
        for at, line in self._lines:
            if any(word in line for word in REPORT_WORDS):
                return at
        return None


def start_blocked(
    root: Path,
    target: SilentTarget,
    *,
    command: str,
    concurrency: int,
    as_pid1: bool = False,
) -> Blocked:
    """Start ``evalkit COMMAND`` and return once every worker is blocked on the target."""
    cases = max(concurrency, 1)
    write_project(root, target.port, cases=cases, concurrency=concurrency)
    argv = [sys.executable, "-m", "evalkit", *COMMANDS[command]]
    if as_pid1:
        argv = ["unshare", "--pid", "--fork", "--kill-child", *argv]
    env = {**os.environ, "NO_COLOR": "1", **FAULTHANDLER_ENV}
    env.pop("EVALKIT_DEBUG", None)
    proc = subprocess.Popen(
        argv, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    blocked = Blocked(proc, proc.pid)
    blocked.start_reading()
    if not target.wait_for(cases, START_BOUND_S):
        what = f"{command} to open its {cases} connection(s) to the silent target"
        raise blocked.timed_out(what, START_BOUND_S)
    if as_pid1:
        blocked.pid = _pid1_child(proc)
    return blocked


def _pid1_child(wrapper: subprocess.Popen[str]) -> int:
    """The evalkit process: unshare's child, PID 1 of its namespace."""
    children = Path(f"/proc/{wrapper.pid}/task/{wrapper.pid}/children")
    found = children.read_text().split() if children.exists() else []
    if not found:  # it has reached the target, so it exists
        raise AssertionError("unshare's child is gone")
    child = int(found[0])
    status = Path(f"/proc/{child}/status").read_text().splitlines()
    (nspid,) = [line for line in status if line.startswith("NSpid:")]
    assert nspid.split()[-1] == "1", nspid  # PID 1 inside its namespace
    return child


def expected_status(sig: int) -> int:
    return 143 if sig == signal.SIGTERM else 130
