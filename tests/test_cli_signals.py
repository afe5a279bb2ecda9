"""SIGTERM stops a run the way Ctrl-C does, also as PID 1 (how the container runs evalkit).

The run is blocked on a silent HTTP target (it accepts and never answers); the signal is
sent once the target has *seen* the connection, so nothing depends on timing luck. As
PID 1 of a fresh PID namespace, a signal without a handler would be dropped by the
kernel (``docker stop`` would wait 10 s and kill): that variant needs ``unshare``.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

GOLDENS = '{"id": "a", "query": "alpha", "relevant": ["d1"]}\n'
CHECKS = "checks:\n  - id: floor\n    metric: recall@1\n    op: '>='\n    threshold: 0.5\n"


@pytest.fixture
def silent_target() -> Iterator[tuple[int, threading.Event]]:
    """A TCP server that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    seen = threading.Event()
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)
            seen.set()

    threading.Thread(target=accept, daemon=True).start()
    yield server.getsockname()[1], seen
    server.close()
    for conn in held:
        conn.close()


def project(tmp_path: Path, port: int) -> Path:
    (tmp_path / "goldens.jsonl").write_text(GOLDENS)
    (tmp_path / "checks.yaml").write_text(CHECKS)
    (tmp_path / "evalkit.yaml").write_text(
        "goldens: goldens.jsonl\nchecks: checks.yaml\nmetrics: [recall@1]\n"
        f"target:\n  http: {{url: 'http://127.0.0.1:{port}/s', extract: 'ids', timeout_s: 120}}\n"
    )
    return tmp_path


def _can_unshare() -> bool:
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    probe = subprocess.run(
        [unshare, "--pid", "--fork", "--kill-child", "true"], capture_output=True, check=False
    )
    return probe.returncode == 0


def _pid1_child(wrapper: subprocess.Popen[str]) -> int:
    """The evalkit process: the wrapper's child, PID 1 of its namespace."""
    children = Path(f"/proc/{wrapper.pid}/task/{wrapper.pid}/children")
    for _ in range(200):
        found = children.read_text().split() if children.exists() else []
        if found:
            return int(found[0])
        time.sleep(0.05)
    raise AssertionError("unshare did not start evalkit")


@pytest.mark.parametrize("as_pid1", [False, True], ids=["process", "pid1"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_stops_a_blocked_run_promptly(
    tmp_path: Path,
    silent_target: tuple[int, threading.Event],
    as_pid1: bool,
    sig: signal.Signals,
) -> None:
    if as_pid1 and not _can_unshare():
        pytest.skip("unshare --pid is not permitted here (needs root or user namespaces)")
    port, seen = silent_target
    cwd = project(tmp_path, port)
    command = [sys.executable, "-m", "evalkit", "run", "--out", "run.json"]
    if as_pid1:
        command = ["unshare", "--pid", "--fork", "--kill-child", *command]
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("EVALKIT_DEBUG", None)
    proc = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert seen.wait(60), "the run never reached the target"
        target_pid = _pid1_child(proc) if as_pid1 else proc.pid
        if as_pid1:
            status = Path(f"/proc/{target_pid}/status").read_text().splitlines()
            (nspid,) = [line for line in status if line.startswith("NSpid:")]
            assert nspid.split()[-1] == "1"  # PID 1 inside its namespace
        start = time.monotonic()
        os.kill(target_pid, sig)
        _, stderr = proc.communicate(timeout=30)
        took = time.monotonic() - start
    finally:
        proc.kill()
        proc.wait()
    want = 143 if sig == signal.SIGTERM else 130
    # unshare --fork reports the child's exit status as its own.
    assert proc.returncode == want, (proc.returncode, stderr)
    assert took < 10, f"took {took:.1f} s (docker stop's grace period is 10 s)"
    assert "Traceback" not in stderr
    # The same handling as Ctrl-C: one line saying what was kept.
    assert "interrupted" in stderr or "terminated" in stderr, stderr
