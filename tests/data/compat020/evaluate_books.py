"""A paired-evalkit 0.2.0-style evaluation, written only against 0.2.0's API.

It loads goldens whose `expected` lists the relevant ids, wraps two rankers in
CallableTarget, scores them with built-in and plugin metrics, and applies a
bare-list checks file by hand (0.2.0 had no gate).  Exit status: 0 when every
blocking check holds, 1 otherwise.

    python evaluate_books.py [candidate-version]     # default v2, baseline v1
"""

from __future__ import annotations

import sys
from pathlib import Path

import plugins  # noqa: F401  (registers first_hit and empty_rate)
from book_search import make_target

from evalkit import (
    CaseResult,
    CheckError,
    GoldenError,
    RunResult,
    TargetError,
    compare,
    load_checks,
    load_goldens,
    paired_bootstrap,
    polarity,
)
from evalkit.registry import get_metric, is_aggregate

HERE = Path(__file__).parent
PER_CASE = ["recall@5", "ndcg@10", "first_hit"]


def evaluate(version: str, goldens: object) -> RunResult[CaseResult]:
    target = make_target(version)
    rows = []
    for case in goldens:  # type: ignore[attr-defined]
        response = target.invoke(case)
        scores = {name: get_metric(name)(response, case) for name in PER_CASE}
        rows.append(CaseResult.from_response(case.id, response, scores))
    return RunResult(name=target.name, per_query=rows)


def value_of(metric: str, rows: list[CaseResult]) -> float:
    if is_aggregate(metric):
        return get_metric(metric)(rows)
    return sum(row.metrics[metric] for row in rows) / len(rows)


def main(candidate_version: str = "v2") -> int:
    try:
        goldens = load_goldens(HERE / "goldens.jsonl")
        specs = load_checks(HERE / "checks.yaml", known_case_ids=goldens.ids)
    except (GoldenError, CheckError) as exc:
        print(f"config error: {exc}", file=sys.stderr)
        return 2
    try:
        baseline = evaluate("v1", goldens)
        candidate = evaluate(candidate_version, goldens)
    except TargetError as exc:
        print(f"target failed: {exc}", file=sys.stderr)
        return 3

    failed = False
    for spec in specs:
        rows = spec.select(candidate.per_query)
        if spec.is_threshold:
            observed = value_of(spec.metric, rows)
            ok = compare(spec.op, observed, spec.threshold)
            detail = f"{observed:.4f}"
        else:
            ids = {row.query_id for row in rows}
            pick = [r for r in candidate.per_query if r.query_id in ids]
            base = [r for r in baseline.per_query if r.query_id in ids]
            verdict = paired_bootstrap(
                RunResult("candidate", pick), RunResult("baseline", base), spec.metric
            )
            worse = verdict.observed < 0 if polarity(spec.metric) else verdict.observed > 0
            ok = not (verdict.significant and worse)
            detail = f"{verdict.observed:+.4f} [{verdict.ci_low:+.4f}, {verdict.ci_high:+.4f}]"
        status = "pass" if ok else ("FAIL" if spec.blocking else "warn")
        print(f"{status:4}  {spec.describe()}  {detail}  ({spec.coverage(candidate.per_query)})")
        failed = failed or (spec.blocking and not ok)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
