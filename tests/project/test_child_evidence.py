"""A wait on a child that runs out explains itself (helpers.child_evidence, issue #48).

The child here hangs on purpose (a parked thread, and a main thread waiting for an
event nobody sets): the failure must name each thread's state from /proc, carry every thread's
Python traceback, and keep what the child had said on stderr.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.child_evidence import FAULTHANDLER_ENV, communicate, wait_until

HUNG = """
import sys, threading
from pathlib import Path

def parked_forever():
    threading.Event().wait()

threading.Thread(target=parked_forever, daemon=True).start()
print("child: about to block", file=sys.stderr, flush=True)
Path(sys.argv[1]).touch()
threading.Event().wait()
"""


def hung_child(tmp_path: Path) -> subprocess.Popen[str]:
    ready = tmp_path / "ready"
    proc = subprocess.Popen(
        [sys.executable, "-c", HUNG, str(ready)],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **FAULTHANDLER_ENV},
    )
    wait_until(ready.exists, what="the child to start", proc=proc, stderr=lambda: "")
    return proc


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_a_wait_that_runs_out_shows_each_threads_state_and_traceback(tmp_path: Path) -> None:
    proc = hung_child(tmp_path)
    with pytest.raises(AssertionError) as failure:
        # Never true: the bound is what ends this wait, whatever its length.
        wait_until(
            lambda: False,
            what="something that never happens",
            proc=proc,
            stderr=lambda: proc.communicate()[1],
            bound_s=1.0,
        )
    text = str(failure.value)
    assert "something that never happens: not within 1 s" in text
    assert text.count("\nthread ") == 2, text  # the main thread and the parked one
    assert "S (sleeping)" in text
    assert "child: about to block" in text  # what it said before
    assert "in parked_forever" in text  # the parked thread's Python traceback
    assert proc.returncode == -signal.SIGABRT


def test_a_child_that_ends_first_is_reported_with_its_stderr(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.exit('child: gave up')"],
        stderr=subprocess.PIPE,
        text=True,
    )
    with pytest.raises(AssertionError, match=r"ended first \(exit 1\)\nchild: gave up"):
        wait_until(lambda: False, what="rows", proc=proc, stderr=lambda: proc.communicate()[1])


def test_communicate_past_its_bound_fails_with_the_evidence(tmp_path: Path) -> None:
    proc = hung_child(tmp_path)
    with pytest.raises(AssertionError, match=r"(?s)the child to end: not within 1 s.*thread "):
        communicate(proc, what="the child to end", bound_s=1.0)
