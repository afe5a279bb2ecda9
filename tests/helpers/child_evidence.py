"""Waiting on a child process, and the evidence a wait that ran out prints.

A test waits on an event (a line of output, rows in a file, the process's exit) with a
bound far beyond its quiet time, so only a real hang reaches it.  When one does, the
failure says what the child was doing: each thread's ``/proc`` status, wait channel and
kernel stack, then every thread's Python traceback (the child runs with
``PYTHONFAULTHANDLER=1``, and SIGABRT makes it write them to its stderr as it ends),
then the child's whole stderr.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

# Enough for a start-up under a loaded 2-core machine many times over (an evalkit
# process starts in about a second there); a child that needs longer is hung.
START_BOUND_S = 180.0
# Every thread's Python traceback on stderr when the child gets SIGABRT.
FAULTHANDLER_ENV: Mapping[str, str] = {"PYTHONFAULTHANDLER": "1"}
_POLL_S = 0.01


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError as exc:
        return f"({exc.strerror or exc})"


def thread_report(pid: int) -> str:
    """Each thread of ``pid``: name, state, wait channel, context switches, kernel stack."""
    try:
        tids = sorted(os.listdir(f"/proc/{pid}/task"), key=int)
    except OSError as exc:
        return f"/proc/{pid}: {exc.strerror} (the process is gone)"
    lines: list[str] = []
    for tid in tids:
        task = Path(f"/proc/{pid}/task/{tid}")
        fields = (line.partition(":") for line in _read(task / "status").splitlines())
        status = {key: value.strip() for key, _, value in fields}
        switches = (
            f"{status.get('voluntary_ctxt_switches', '?')}/"
            f"{status.get('nonvoluntary_ctxt_switches', '?')}"
        )
        lines.append(
            f"thread {tid} {status.get('Name', '?')}: {status.get('State', '?')}, "
            f"wchan {_read(task / 'wchan') or '-'}, switches (voluntary/not) {switches}"
        )
        lines += ["    " + frame for frame in _read(task / "stack").splitlines()]
    return "\n".join(lines)


def this_process_threads() -> str:
    """Every thread of this process: its /proc state and its Python stack (for a failed
    in-process wait)."""
    import sys
    import threading
    import traceback

    names = {t.ident: t.name for t in threading.enumerate()}
    parts = [thread_report(os.getpid())]
    for ident, frame in sys._current_frames().items():
        stack = "".join(traceback.format_stack(frame))
        parts.append(f"--- Python thread {names.get(ident, ident)}\n{stack}")
    return "\n".join(parts)


def end_with_tracebacks(proc: subprocess.Popen[Any], bound_s: float = 30.0) -> None:
    """End ``proc``, asking it first for every thread's Python traceback (SIGABRT)."""
    if proc.poll() is not None:
        return
    with suppress(ProcessLookupError):
        proc.send_signal(signal.SIGABRT)
    with suppress(subprocess.TimeoutExpired):
        proc.wait(bound_s)
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def timed_out(
    what: str, proc: subprocess.Popen[Any], bound_s: float, stderr: Callable[[], str]
) -> AssertionError:
    """The failure for a wait on ``proc`` that ran out: ``what`` did not happen in time.

    ``stderr()`` is asked once the child has ended (so it holds the tracebacks)."""
    threads = thread_report(proc.pid)
    end_with_tracebacks(proc)
    return AssertionError(
        f"{what}: not within {bound_s:g} s (pid {proc.pid})\n"
        f"--- each thread, from /proc\n{threads}\n"
        f"--- the child's stderr (every thread's Python traceback last)\n{stderr()}"
    )


def wait_until(
    happened: Callable[[], bool],
    *,
    what: str,
    proc: subprocess.Popen[Any],
    stderr: Callable[[], str],
    bound_s: float = START_BOUND_S,
) -> None:
    """Return once ``happened()``; the child ending first, or the bound, fails with evidence."""
    deadline = time.monotonic() + bound_s
    while not happened():
        if proc.poll() is not None:
            raise AssertionError(
                f"{what}: the child ended first (exit {proc.returncode})\n{stderr()}"
            )
        if time.monotonic() >= deadline:
            raise timed_out(what, proc, bound_s, stderr)
        time.sleep(_POLL_S)


def communicate(
    proc: subprocess.Popen[str], *, what: str, bound_s: float = START_BOUND_S
) -> tuple[str, str]:
    """``proc.communicate()`` within ``bound_s``; past it, a failure with the evidence."""
    try:
        return proc.communicate(timeout=bound_s)
    except subprocess.TimeoutExpired:
        raise timed_out(what, proc, bound_s, lambda: proc.communicate()[1]) from None


def run_bounded(
    argv: Sequence[str],
    *,
    bound_s: float = START_BOUND_S,
    env: Mapping[str, str] | None = None,
    cwd: Path | str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(argv, capture_output=True, text=True)`` that explains a hang."""
    proc = subprocess.Popen(
        list(argv),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**(env if env is not None else os.environ), **FAULTHANDLER_ENV},
        cwd=cwd,
    )
    out, err = communicate(proc, what=f"{' '.join(argv)[:200]} to end", bound_s=bound_s)
    return subprocess.CompletedProcess(list(argv), proc.returncode, out, err)
