"""The artefact benchmarks stay runnable: they load an earlier commit's reader and writer
from git, which breaks silently when a module that code imported moves.

Only that they run and agree is asserted (each benchmark checks its readers return the same
rows), never speed: speed figures belong to the benchmark's own run.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from helpers.scripts import ROOT


@pytest.mark.slow
@pytest.mark.parametrize("script", ["bench_artifact_read.py", "bench_artifact_write.py"])
def test_the_benchmark_runs_and_ends_with_its_json_line(script: str) -> None:
    has_baseline = subprocess.run(
        ["git", "cat-file", "-e", "61eb538^{commit}"], cwd=ROOT, capture_output=True, check=False
    )
    if has_baseline.returncode != 0:
        pytest.skip("the benchmarks' baseline commit 61eb538 is not in this clone (shallow?)")
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), "--cases", "300", "--repeat", "1"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1])["cases"] == 300
