"""Benchmark: a gate over stored artefacts, 10 checks (half vs_baseline), at several sizes.

    uv run python benchmarks/bench_gate.py                         # 10^3, 10^4, 10^5 cases
    uv run python benchmarks/bench_gate.py --cases 1000 --resamples 10000

Times what `evalkit gate --candidate C --baseline B` does after the target has run:
read both artefacts, load the checks, decide every check (10,000 resamples each, the
default; a latency_p95 threshold and a latency_p95 vs_baseline check among them), and
render the markdown and JSON reports, and prints the share of each stage:

* ``read``: reading both artefacts and the checks;
* ``resample``: the paired bootstrap engine (``stats.bootstrap.marginal_draws``), of
  which ``aggregate`` is the latency_p95 Δ recomputed on every resample;
* ``detectable``: the detectable-regression simulation of each verdict
  (``stats.power.detectable_regression``, 1,000 simulated evals each);
* ``decide other``: the rest of ``evaluate_gate`` (pairing, intervals, verdicts);
* ``render``: the markdown and JSON reports.

Stage times (wall) come from wrapping those functions with a timer (they are called a few
times per gate, so the wrapping costs nothing measurable).  Per size it prints the
wall and CPU time, and the CPU time per case, which is flat when the gate is linear in
its cases (CPU time: on a shared machine wall time mostly measures the neighbours).
For reference it also times, at up to --naive-max cases, the obvious implementation of the five
vs_baseline tests (one resamples x n index matrix per check).  The load average is
printed with every size; the last line is one JSON object.  Target (#27): 10^5 cases
under 30 s on the 2-core machine.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import evalkit
import evalkit.gate.procedure
import evalkit.stats.compare
from evalkit._spec.artifact import GoldensInfo, build_artifact, read_artifact, write_artifact
from evalkit.checks import load_checks_file
from evalkit.gate.model import GateOptions
from evalkit.gate.procedure import evaluate_gate
from evalkit.report.json_report import dumps
from evalkit.report.markdown import render_markdown
from evalkit.results import CaseResult, RunResult
from evalkit.stats.aggregates import GenericAggregate, ItemCountAggregate, NearestRankAggregate
from evalkit.targets.base import TargetResponse

METRICS = ["recall@1", "recall@5", "recall@10", "ndcg@10", "latency_p95", "max_item_share@3"]

CHECKS = """\
checks:
  - {id: recall_floor, metric: recall@10, op: ">=", threshold: 0.3}
  - {id: ndcg_floor, metric: ndcg@10, op: ">=", threshold: 0.2}
  - {id: p95, metric: latency_p95, op: "<=", threshold: 500}
  - {id: share, metric: max_item_share@3, op: "<=", threshold: 0.9, level: warn}
  - {id: recall1_floor, metric: recall@1, op: ">=", threshold: 0.1}
  - {id: ndcg_vs, metric: ndcg@10, vs_baseline: no_significant_regression}
  - {id: recall10_vs, metric: recall@10, vs_baseline: no_significant_regression}
  - {id: recall5_ni, metric: recall@5, vs_baseline: non_inferiority, margin: 0.02}
  - {id: recall1_vs, metric: recall@1, vs_baseline: no_significant_regression}
  - {id: p95_vs, metric: latency_p95, vs_baseline: no_significant_regression}
"""


def make_run(name: str, n: int, shift: float, seed: int) -> RunResult[CaseResult]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        quality = min(1.0, max(0.0, rng.betavariate(2, 2) + shift))
        ids = [f"d{rng.randrange(5000)}" for _ in range(10)]
        metrics = {
            "recall@1": float(rng.random() < quality * 0.6),
            "recall@5": min(1.0, quality * 1.1),
            "recall@10": min(1.0, quality * 1.2),
            "ndcg@10": quality,
        }
        latency = rng.lognormvariate(4.0, 0.4)
        rows.append(CaseResult(f"case-{i:05d}", TargetResponse(ids, latency_ms=latency), metrics))
    return RunResult(name, rows)


def naive_tests(cand: RunResult[CaseResult], base: RunResult[CaseResult], b: int) -> float:
    """The obvious way: for each per-case vs_baseline check, a B x n index matrix."""
    started = time.perf_counter()
    rng = np.random.default_rng(0)
    for metric in ("ndcg@10", "recall@10", "recall@5", "recall@1"):
        d = np.array(
            [
                c.metrics[metric] - x.metrics[metric]
                for c, x in zip(cand.per_query, base.per_query, strict=True)
            ]
        )
        idx = rng.integers(0, d.size, size=(b, d.size))
        means = d[idx].mean(axis=1)
        np.percentile(means, [2.5, 97.5])
    lat_c = np.array([r.response.latency_ms for r in cand.per_query if r.response])
    lat_b = np.array([r.response.latency_ms for r in base.per_query if r.response])
    idx = rng.integers(0, lat_c.size, size=(b, lat_c.size))
    np.percentile(lat_c[idx], 95, axis=1) - np.percentile(lat_b[idx], 95, axis=1)
    return time.perf_counter() - started


STAGES: dict[str, float] = {}


def _timed_stage(stage: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            STAGES[stage] = STAGES.get(stage, 0.0) + time.perf_counter() - started

    return wrapper


def _instrument() -> None:
    # The names as the gate and the comparison engine look them up.
    for module, name, stage in (
        (evalkit.gate.procedure, "detectable_regression", "detectable"),
        (evalkit.stats.compare, "marginal_draws", "resample"),
    ):
        setattr(module, name, _timed_stage(stage, getattr(module, name)))
    for cls in (NearestRankAggregate, ItemCountAggregate, GenericAggregate):
        cls.bootstrap = _timed_stage("aggregate", cls.bootstrap)  # type: ignore[method-assign]


def one_size(cases: int, resamples: int, naive_max: int) -> dict[str, Any]:
    STAGES.clear()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        fps = {f"case-{i:05d}": f"fp{i}" for i in range(cases)}
        goldens = GoldensInfo("set", fps)
        base = make_run("baseline", cases, 0.0, seed=1)
        cand = make_run("candidate", cases, -0.01, seed=2)
        for name, run in (("base", base), ("cand", cand)):
            art = build_artifact(run, METRICS, goldens=goldens, git=(None, None), seed=42)
            write_artifact(art, folder / f"{name}.json")
        (folder / "checks.yaml").write_text(CHECKS)

        started = time.perf_counter()
        cpu_started = time.process_time()
        candidate = read_artifact(folder / "cand.json")
        baseline = read_artifact(folder / "base.json")
        checks = load_checks_file(folder / "checks.yaml")
        loaded = time.perf_counter()
        report = evaluate_gate(
            checks.checks, candidate, baseline, GateOptions(n_resamples=resamples)
        )
        decided = time.perf_counter()
        markdown = render_markdown(report, config_name="bench")
        dumps(report)
        rendered = time.perf_counter()
        cpu = time.process_time() - cpu_started
    load = os.getloadavg()[0]
    naive_s = naive_tests(cand, base, resamples) if cases <= naive_max else None
    decide = decided - loaded
    resample = STAGES.get("resample", 0.0)
    aggregate = STAGES.get("aggregate", 0.0)
    detectable = STAGES.get("detectable", 0.0)
    stages = {
        "read": loaded - started,
        "resample (per-case metrics)": resample - aggregate,
        "aggregate (latency_p95)": aggregate,
        "detectable": detectable,
        "decide other": decide - resample - detectable,
        "render": rendered - decided,
    }
    wall = rendered - started
    print(
        f"gate over {cases:,} cases, {len(checks.checks)} checks, {resamples:,} resamples: "
        f"{wall:.2f} s wall, {cpu:.2f} s CPU ({cpu / cases * 1e6:.0f} us CPU per case), "
        f"load average {load:.2f}"
    )
    for stage, seconds in stages.items():
        print(f"  {stage:<28} {seconds:8.2f} s  {100 * seconds / wall:5.1f} %")
    if naive_s is not None:
        print(f"  reference: the five vs_baseline tests done naively took {naive_s:.2f} s")
    return {
        "n_cases": cases,
        "n_checks": len(checks.checks),
        "n_vs_baseline": report.n_vs_baseline_tests,
        "n_resamples": resamples,
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "stages_s": {k: round(v, 3) for k, v in stages.items()},
        "naive_tests_s": None if naive_s is None else round(naive_s, 3),
        "verdict": report.verdict,
        "markdown_chars": len(markdown),
        "load_avg_1m": round(load, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cases", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument(
        "--naive-max", type=int, default=10_000, help="largest size timed the naive way"
    )
    args = parser.parse_args()
    _instrument()
    results = [one_size(n, args.resamples, args.naive_max) for n in args.cases]
    print(json.dumps(results if len(results) > 1 else results[0]))


if __name__ == "__main__":
    main()
