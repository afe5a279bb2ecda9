"""benchmarks/bench_answers.py stays runnable and its two scorers agree on every case.

Only agreement is asserted, never speed (speed figures belong to the benchmark's own run).
The generated cases must give every metric both outcomes, or agreement would prove nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from types import ModuleType

from helpers.scripts import ROOT, load_script

BENCH = ROOT / "benchmarks" / "bench_answers.py"


def bench() -> ModuleType:
    return load_script(str(BENCH.relative_to(ROOT)))


def test_the_scorers_agree_and_every_metric_sees_more_than_one_value() -> None:
    module = bench()
    cases = module.generate(600, 3)
    ours, reference = module.run_evalkit(cases), module.run_reference(cases)
    assert ours == reference
    for column, metric in enumerate(module.metrics()):
        assert len({row[column] for row in ours}) >= 2, metric.kind


def test_the_benchmark_runs_and_ends_with_its_json_line() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--cases", "300", "--repeats", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout.splitlines()[-1])
    assert figures["cases"] == 300
    assert figures["metrics"] == 9
    assert figures["mismatched_cases"] == 0
    assert figures["evalkit_s"] > 0
    assert figures["reference_s"] > 0
