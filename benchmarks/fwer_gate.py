"""Family-wise one-sided false-fail rate of the gate under an exact null, per correction.

k independent higher-is-better metrics; per case and metric a shared level b ~ U(0.3, 0.7),
candidate and baseline each b + N(0, 0.1): exchangeable, true difference 0.  Each trial runs
k ``no_significant_regression`` checks (default alpha and method) through ``evaluate_gate``
with corrections none / holm / maxt on the same data; a trial is a family false fail when
any verdict fails.  Target with a correction: about alpha/2 = 2.5 % (one-sided);
``none`` should follow Sidak, 1 - 0.975**k.

    uv run python benchmarks/fwer_gate.py 1000 1000            # trials, n_resamples
    uv run python benchmarks/fwer_gate.py 1000 1000 10x30      # one k x n cell

Prints one JSON object per cell (about 2 minutes per 1,000 trials at k = 10 on 2 cores).
"""

from __future__ import annotations

import json
import math
import os
import random
import sys
import time
from collections import Counter

from evalkit import CaseResult, RunResult, TargetResponse, register_metric
from evalkit._spec.artifact import GoldensInfo, RunArtifact, build_artifact
from evalkit._spec.checks import CheckSpec
from evalkit.gate.model import GateOptions
from evalkit.gate.procedure import evaluate_gate

KMAX = 10
METRICS = [f"fw_m{j}" for j in range(KMAX)]
CORRECTIONS = ("none", "holm", "maxt")
Values = dict[str, dict[str, float]]


def _unused(_response: TargetResponse, _case: object) -> float:  # values are given directly
    return 0.0


for _name in METRICS:
    register_metric(_name, higher_is_better=True)(_unused)


def artifact(name: str, values: Values, metrics: list[str]) -> RunArtifact:
    rows = [
        CaseResult(cid, TargetResponse([cid], latency_ms=10.0), dict(v))
        for cid, v in values.items()
    ]
    return build_artifact(
        RunResult(name, rows),
        metrics,
        goldens=GoldensInfo("set", {cid: f"fp-{cid}" for cid in values}),
        git=("deadbeef", False),
        seed=1,
    )


def null_pair(n: int, k: int, rng: random.Random) -> tuple[Values, Values]:
    base: Values = {}
    cand: Values = {}
    for i in range(n):
        cid = f"c{i:03d}"
        base[cid], cand[cid] = {}, {}
        for m in METRICS[:k]:
            level = rng.uniform(0.3, 0.7)
            base[cid][m] = level + rng.gauss(0, 0.1)
            cand[cid][m] = level + rng.gauss(0, 0.1)
    return base, cand


def run_cell(k: int, n: int, trials: int, n_resamples: int, seed0: int) -> dict[str, object]:
    checks = [
        CheckSpec(id=f"vs{j}", metric=METRICS[j], vs_baseline="no_significant_regression")
        for j in range(k)
    ]
    fails: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    rng = random.Random(seed0 + 1000 * k + n)
    start = time.perf_counter()
    for trial in range(trials):
        base, cand = null_pair(n, k, rng)
        cand_art = artifact("cand", cand, METRICS[:k])
        base_art = artifact("base", base, METRICS[:k])
        for corr in CORRECTIONS:
            options = GateOptions(n_resamples=n_resamples, seed=trial + 1, correction=corr)
            statuses = [
                v.status for v in evaluate_gate(checks, cand_art, base_art, options).verdicts
            ]
            fails[corr] += "fail" in statuses
            errors[corr] += any(s in ("error", "incomparable") for s in statuses)
    out: dict[str, object] = {
        "k": k,
        "n": n,
        "trials": trials,
        "n_resamples": n_resamples,
        "seconds": round(time.perf_counter() - start, 1),
        "sidak_none_pct": round(100 * (1 - 0.975**k), 2),
    }
    for corr in CORRECTIONS:
        p = fails[corr] / trials
        out[corr] = {
            "fwer_pct": round(100 * p, 2),
            "mc_se_pct": round(100 * math.sqrt(p * (1 - p) / trials), 2),
            "error_trials": errors[corr],
        }
    return out


def main(argv: list[str]) -> None:
    trials = int(argv[0]) if argv else 1000
    n_resamples = int(argv[1]) if len(argv) > 1 else 1000
    cells = [(int(a), int(b)) for a, b in (c.split("x") for c in argv[2:])] or [
        (5, 30),
        (5, 100),
        (10, 30),
        (10, 100),
    ]
    seed0 = int(os.environ.get("SEED0", "12345"))
    for k, n in cells:
        print(json.dumps(run_cell(k, n, trials, n_resamples, seed0)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
