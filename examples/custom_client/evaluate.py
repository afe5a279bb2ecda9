"""Compare versions of a search client on a hand-written golden set, offline.

    uv run python examples/custom_client/evaluate.py

For the candidate (v2) and for a build with a ranking bug (v3), each against
the baseline (v1): every metric's mean, then ``paired_test`` per metric — the
change, its 95% interval, the p-value, and whether the change is real or within
noise, decided exactly as ``evalkit gate`` and ``evalkit compare`` decide it
(paired t on the per-case differences).  On 38 cases the candidate's small gains
sit near the edge of what the eval can detect; the bug's losses are far outside
the noise.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from search_service import make_target  # noqa: E402

from evalkit import CaseResult, RunResult, paired_test  # noqa: E402
from evalkit.execute import evaluate  # noqa: E402
from evalkit.golden_loaders import load_goldens  # noqa: E402

METRICS = ["recall@1", "recall@5", "ndcg@10"]


def main() -> None:
    goldens = load_goldens(HERE / "goldens.jsonl")
    with make_target("v1") as old, make_target("v2") as new, make_target("v3") as buggy:
        baseline = evaluate(old, goldens, METRICS, name="baseline")
        candidate = evaluate(new, goldens, METRICS, name="candidate")
        regressed = evaluate(buggy, goldens, METRICS, name="regressed")
    print(f"{len(goldens)} golden cases")
    report(baseline, candidate, "candidate (v2) against baseline (v1)")
    report(baseline, regressed, "regressed build (v3) against baseline (v1)")


def report(baseline: RunResult[CaseResult], candidate: RunResult[CaseResult], title: str) -> None:
    print(f"\n== {title}\n")
    print(f"{'metric':<12}{'baseline':>10}{'candidate':>11}{'delta':>9}")
    print("-" * 42)
    for metric in METRICS:
        b, c = baseline.mean(metric), candidate.mean(metric)
        print(f"{metric:<12}{b:>10.4f}{c:>11.4f}{c - b:>+9.4f}")

    print("\nPaired test (the gate's verdict):")
    for metric in METRICS:
        v = paired_test(candidate, baseline, metric)
        verdict = "REAL" if v.significant else "not significant"
        print(
            f"  {metric:<10} {v.observed:+.4f}  95% CI [{v.ci_low:+.4f}, {v.ci_high:+.4f}]  "
            f"p={v.p_value:.4f}  {verdict} ({v.decided_by})"
        )


if __name__ == "__main__":
    main()
