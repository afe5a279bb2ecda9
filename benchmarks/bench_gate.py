"""Benchmark: a gate over stored artefacts of 1,000 cases and 10 checks (half vs_baseline).

    uv run python benchmarks/bench_gate.py [--cases 1000] [--resamples 10000]

Times what `evalkit gate --candidate C --baseline B` does after the target has run:
read both artefacts, load the checks, decide every check (10,000 resamples each),
and render the markdown and JSON reports.  For reference it also times the
obvious implementation of the five vs_baseline tests in the same run (one
resamples x n index matrix per check).  The last line is one JSON object.
Target: under 5 s on the 2-core CI machine.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

import numpy as np

import evalkit  # noqa: F401  (registers the built-in metrics)
from evalkit._model.results import CaseResult, RunResult
from evalkit._spec.artifact import GoldensInfo, build_artifact, read_artifact, write_artifact
from evalkit._spec.checks import load_checks_file
from evalkit.gate.model import GateOptions
from evalkit.gate.procedure import evaluate_gate
from evalkit.report.json_report import dumps
from evalkit.report.markdown import render_markdown
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=10_000)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        fps = {f"case-{i:05d}": f"fp{i}" for i in range(args.cases)}
        goldens = GoldensInfo("set", fps)
        base = make_run("baseline", args.cases, 0.0, seed=1)
        cand = make_run("candidate", args.cases, -0.01, seed=2)
        for name, run in (("base", base), ("cand", cand)):
            art = build_artifact(run, METRICS, goldens=goldens, git=(None, None), seed=42)
            write_artifact(art, folder / f"{name}.json")
        (folder / "checks.yaml").write_text(CHECKS)

        started = time.perf_counter()
        candidate = read_artifact(folder / "cand.json")
        baseline = read_artifact(folder / "base.json")
        checks = load_checks_file(folder / "checks.yaml")
        loaded = time.perf_counter()
        report = evaluate_gate(
            checks.checks, candidate, baseline, GateOptions(n_resamples=args.resamples)
        )
        decided = time.perf_counter()
        markdown = render_markdown(report, config_name="bench")
        dumps(report)
        rendered = time.perf_counter()

    naive_s = naive_tests(cand, base, args.resamples)
    result = {
        "n_cases": args.cases,
        "n_checks": len(checks.checks),
        "n_vs_baseline": report.n_vs_baseline_tests,
        "n_resamples": args.resamples,
        "load_s": round(loaded - started, 3),
        "decide_s": round(decided - loaded, 3),
        "render_s": round(rendered - decided, 3),
        "wall_s": round(rendered - started, 3),
        "naive_tests_s": round(naive_s, 3),
        "verdict": report.verdict,
        "markdown_chars": len(markdown),
    }
    print(f"gate over {args.cases} cases, {len(checks.checks)} checks: {result['wall_s']} s")
    print(
        f"  load {result['load_s']} s, decide {result['decide_s']} s, render {result['render_s']} s"
    )
    print(f"  reference: the five vs_baseline tests done naively took {result['naive_tests_s']} s")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
