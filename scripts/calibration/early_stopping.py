"""Early stopping's error rates and savings, measured (docs/early-stopping.md).

    uv run python scripts/calibration/early_stopping.py [--trials 2000] [--seed 47]

Six measurements, every one of the anytime-valid sequence the gate stops on
(evalkit.stats.sequential), looked at after every batch exactly as the gate looks:

1. **false fails under a true null**: the share of simulated evals in which a
   ``no_significant_regression`` check settles as failed at some look, on continuous,
   binary, tie-heavy and real per-topic data (TREC 2003 Robust, topics resampled with a
   fair coin swapping each topic's two runs: an exact null).  Nominal: alpha/2 one-sided.
2. **wrong passes at the edge**: the true regression is exactly min_effect, and the check
   settles as passed (every regression larger than δ ruled out) at some look; includes a
   96 %-tie shape where the first batches are often all ties.
3. **replays of real per-query data**: every pair of the 17 Robust runs on every metric,
   the 100 topics replayed in random orders in batches of 10; the verdict the replay
   stops on against the full run's fixed-n verdict (paired t) where that one is clear.
4. **share of cases needed** on a 2,000-case set, batch 100: a clear regression, and an
   unchanged candidate with min_effect.
5. **clustered cases**: a true null whose differences move together within clusters of
   1-12 cases, run in whole-cluster batches and read by the cluster-level (ratio)
   sequence the gate uses with ``clusters:``; beside it, the case-level sequence that
   treats the same cases as independent.
6. **examples/rag_answers**, replayed larger: its 24 cases cannot stop early (see the
   docs), so each variant's 24 per-case differences against the committed baseline are
   resampled into 2,000-case golden sets "like these" and monitored in batches of 100.

CPU: about 1-2 minutes at the default 2,000 trials on one core.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import calibrate
import numpy as np
from numpy.typing import NDArray

from evalkit.stats.clustered import ClusterT
from evalkit.stats.sequential import (
    confidence_sequence,
    ratio_confidence_sequence,
    settle_comparison,
)
from evalkit.stats.tdist import t_quantile

FloatArray = NDArray[np.float64]
Draw = Callable[[int, int, np.random.Generator], FloatArray]

ALPHA = 0.05
# Every simulated metric lies in [0, 1]: the gate regularises with the square of the
# range the baseline spans, here 1.
PRIOR_VARIANCE = 1.0


def trec_null(metric: str) -> Draw:
    """Real per-topic differences of a random pair of Robust runs, topics drawn with
    replacement, each topic's two runs swapped by a fair coin: mean exactly 0."""
    table = calibrate.trec_table()[metric]

    def draw(trials: int, n: int, rng: np.random.Generator) -> FloatArray:
        topics, runs = table.shape
        first = rng.integers(0, runs, trials)
        second = (first + rng.integers(1, runs, trials)) % runs
        chosen = rng.integers(0, topics, (trials, n))
        d = table[chosen, first[:, None]] - table[chosen, second[:, None]]
        out: FloatArray = np.where(rng.random((trials, n)) < 0.5, d, -d)
        return out

    return draw


def rare_losses(trials: int, n: int, rng: np.random.Generator) -> FloatArray:
    """96 % ties, 3 % losses of 1, 1 % wins of 1: a true regression of exactly 0.02."""
    u = rng.random((trials, n))
    out: FloatArray = np.where(u < 0.03, -1.0, np.where(u < 0.04, 1.0, 0.0))
    return out


NULL_SHAPES: dict[str, Draw] = {
    "continuous": calibrate.continuous,
    "binary": calibrate.binary,
    "tie-heavy": calibrate.tie_heavy,
    "trec-ndcg@10": trec_null("ndcg@10"),
    "trec-map@1000": trec_null("map@1000"),
    "trec-precision@10": trec_null("precision@10"),
}


def looks_of(n: int, batch: int) -> NDArray[np.int64]:
    return np.unique(np.minimum(np.arange(batch, n + batch, batch), n)).astype(np.int64)


class Stop(NamedTuple):
    """Where one monitored eval settled (or not), and which way."""

    outcome: str | None
    cases: int


# The two sequences the gate reads: the asymptotic one (a metric without a declared
# range), and the empirical-Bernstein one (a metric declared in [0, 1], as every simulated
# metric here is: recall, nDCG, a pass/fail grade), whose differences lie within ±1.
DIFF_RANGE: dict[str, tuple[float, float] | None] = {
    "asymptotic": None,
    "empirical-Bernstein": (-1.0, 1.0),
}


def monitor(
    diffs: FloatArray,
    batch: int,
    *,
    min_effect: float | None,
    planned: int | None = None,
    construction: str = "asymptotic",
) -> Stop:
    """Look after every batch; stop at the first look that settles the check."""
    looks = looks_of(diffs.size, batch)
    cs = confidence_sequence(
        np.clip(diffs, -1.0, 1.0),  # shifted shapes may step past ±1 on a rare case
        ALPHA,
        value_range=DIFF_RANGE[construction],
        planned_n=planned or diffs.size,
        prior_variance=PRIOR_VARIANCE,
        looks=looks,
    )
    beyond = 0.0 if min_effect is None else min_effect
    for j, n in enumerate(looks.tolist()):
        outcome = settle_comparison(
            float(cs.low[j]),
            float(cs.high[j]),
            higher_is_better=True,
            fail_beyond=beyond,
            pass_within=min_effect,
        )
        if outcome is not None:
            return Stop(outcome, n)
    return Stop(None, diffs.size)


def rate(hits: int, trials: int) -> str:
    se = math.sqrt(max(hits, 1) * (trials - hits) / trials) / trials
    return f"{hits / trials:.2%} (± {1.96 * se:.2%})"


def false_fails(
    trials: int, n: int, batch: int, seed: int, construction: str = "asymptotic"
) -> dict[str, float]:
    out = {}
    for name, draw in NULL_SHAPES.items():
        rng = np.random.default_rng([seed, n, batch, len(name)])
        data = draw(trials, n, rng)  # the shapes are exact nulls
        fails = sum(
            monitor(row, batch, min_effect=None, construction=construction).outcome == "fail"
            for row in data
        )
        out[name] = fails / trials
        print(f"  {name:18s} n={n} batch={batch}: false fail {rate(fails, trials)}")
    return out


def naive_false_fails(trials: int, n: int, batch: int, seed: int) -> dict[str, float]:
    """The mistake early stopping avoids: a fixed-n 95 % t interval re-checked each batch."""
    out = {}
    for name in ("continuous", "binary"):
        rng = np.random.default_rng([seed, n, batch, len(name), 5])
        data = NULL_SHAPES[name](trials, n, rng)
        fails = 0
        for row in data:
            fails += any(
                fixed_n_interval(row[:m], 1.0 - ALPHA)[1] < 0 for m in looks_of(n, batch).tolist()
            )
        out[name] = fails / trials
        print(f"  {name:18s} n={n} batch={batch}: naive re-checked t fails {rate(fails, trials)}")
    return out


def wrong_passes(
    trials: int, n: int, batch: int, seed: int, construction: str = "asymptotic"
) -> dict[str, float]:
    """True regression exactly δ: a settled pass claims every regression > δ ruled out."""
    out = {}
    effect = 0.02
    cases: dict[str, Draw] = {
        "rare-losses (96% ties)": rare_losses,
        "continuous shifted": lambda t, m, r: calibrate.continuous(t, m, r) - effect,
        "binary shifted": lambda t, m, r: calibrate.binary(t, m, r) - effect,
    }
    for name, draw in cases.items():
        rng = np.random.default_rng([seed, n, batch, len(name), 2])
        data = draw(trials, n, rng)
        wrong = sum(
            monitor(row, batch, min_effect=effect, construction=construction).outcome == "pass"
            for row in data
        )
        out[name] = wrong / trials
        print(f"  {name:24s} δ={effect} n={n} batch={batch}: wrong pass {rate(wrong, trials)}")
    return out


def fixed_n_interval(diffs: FloatArray, level: float) -> tuple[float, float]:
    n = diffs.size
    mean = float(diffs.mean())
    se = float(diffs.std(ddof=1)) / math.sqrt(n)
    q = t_quantile(1.0 - (1.0 - level) / 2.0, n - 1)
    return mean - q * se, mean + q * se


def full_verdict(diffs: FloatArray, level: float, min_effect: float) -> str | None:
    """The full run's verdict with min_effect, and whether it is clear at ``level``."""
    low, high = fixed_n_interval(diffs, level)
    if high < -min_effect:
        return "fail"
    if low > -min_effect:
        return "pass"
    return None


def replays(
    orders: int, batch: int, min_effect: float, seed: int, construction: str = "asymptotic"
) -> tuple[int, int, int, float]:
    """Replays of real runs: (clear replays, agreeing, settled early, mean share run)."""
    rng = np.random.default_rng([seed, 3])
    clear = agree = settled = 0
    shares: list[float] = []
    for metric in calibrate.TREC_METRICS:
        table = calibrate.trec_table()[metric]
        runs = table.shape[1]
        for a in range(runs):
            for b in range(runs):
                if a == b:
                    continue
                diffs = table[:, a] - table[:, b]
                # "clear": the full run's verdict holds at 99 %, not just at 95 %
                truth = full_verdict(diffs, 0.99, min_effect)
                if truth is None:
                    continue
                for _ in range(orders):
                    order = diffs[rng.permutation(diffs.size)]
                    stop = monitor(order, batch, min_effect=min_effect, construction=construction)
                    early = stop.outcome or full_verdict(order, 1.0 - ALPHA, min_effect) or "pass"
                    clear += 1
                    agree += early == truth
                    settled += stop.outcome is not None
                    shares.append(stop.cases / diffs.size)
    return clear, agree, settled, float(np.mean(shares))


def savings(trials: int, seed: int, construction: str = "asymptotic") -> None:
    n, batch = 2000, 100
    rng = np.random.default_rng([seed, 4])
    scenarios: dict[str, tuple[FloatArray, float | None]] = {
        "binary, regression -0.10": (calibrate.binary(trials, n, rng) - 0.10, None),
        "continuous, regression -0.05": (calibrate.continuous(trials, n, rng) - 0.05, None),
        "binary, unchanged, min_effect 0.05": (calibrate.binary(trials, n, rng), 0.05),
        "continuous, unchanged, min_effect 0.03": (calibrate.continuous(trials, n, rng), 0.03),
        "tie-heavy, unchanged, min_effect 0.02": (calibrate.tie_heavy(trials, n, rng), 0.02),
    }
    for name, (data, effect) in scenarios.items():
        stops = [monitor(row, batch, min_effect=effect, construction=construction) for row in data]
        share = np.array([s.cases for s in stops]) / n
        half = float(np.mean([s.outcome is not None and s.cases <= n // 2 for s in stops]))
        print(
            f"  {name:40s}: median share {np.median(share):.0%}, settled by half "
            f"{half:.1%}, outcomes {sorted({str(s.outcome) for s in stops})}"
        )


class ClusteredEval(NamedTuple):
    """One simulated eval: per case its difference, per cluster its size (in run order)."""

    diffs: FloatArray
    sizes: NDArray[np.int64]


def clustered_null(shape: str, clusters: int, rng: np.random.Generator) -> ClusteredEval:
    """An exact null whose differences are correlated within clusters of 1-12 cases.

    ``continuous``: a cluster effect (sd 0.1) shared by its cases plus case noise (sd 0.1),
    intra-cluster correlation 0.5.  ``binary``: pass/fail grades of both runs drawn at the
    cluster's rate, the candidate's moved by ±0.2 for the whole cluster (a fair coin).
    """
    sizes = rng.integers(1, 13, clusters)
    code = np.repeat(np.arange(clusters), sizes)
    if shape == "continuous":
        effect = rng.normal(0.0, 0.1, clusters)[code]
        diffs = np.clip(effect + rng.normal(0.0, 0.1, code.size), -1.0, 1.0)
    else:
        rate = rng.uniform(0.2, 0.8, clusters)
        shift = rng.choice([-0.2, 0.2], clusters)
        base = rng.random(code.size) < rate[code]
        cand = rng.random(code.size) < (rate + shift)[code]
        diffs = cand.astype(np.float64) - base
    return ClusteredEval(diffs, sizes)


def cluster_looks(sizes: NDArray[np.int64], batch: int) -> tuple[list[int], list[int]]:
    """The looks of whole-cluster batches of at least ``batch`` cases: (clusters, cases)."""
    cases = np.cumsum(sizes)
    units, seen, mark = [], [], batch
    for g, total in enumerate(cases.tolist(), start=1):
        if total >= mark or g == sizes.size:
            units.append(g)
            seen.append(total)
            mark = total + batch
    return units, seen


def _hull_high(totals: FloatArray, sizes: NDArray[np.int64], clusters: int) -> float:
    """The upper end the gate reads at a look of ``clusters`` clusters, given the sequence
    is below 0 there: the fixed-n cluster-robust t interval's (the hull's other side)."""
    if clusters < 2:
        return math.inf  # one cluster settles nothing
    fixed_n = ClusterT.of(totals[None, :clusters], sizes[:clusters]).bounds(ALPHA)
    return float(fixed_n[1][0])


def cluster_false_fails(
    trials: int, clusters: int, batch: int, seed: int, prior_variance: float = PRIOR_VARIANCE
) -> dict[str, tuple[float, float]]:
    """Per shape: the monitored false-fail rate of the gate's cluster-level reading (the
    hull of the ratio sequence and the fixed-n cluster-robust t), and of the case-level
    sequence on the same cases (which ignores that they move together)."""
    out = {}
    for shape in ("continuous", "binary"):
        rng = np.random.default_rng([seed, clusters, batch, len(shape)])
        by_cluster = by_case = 0
        for _ in range(trials):
            sim = clustered_null(shape, clusters, rng)
            units, cases = cluster_looks(sim.sizes, batch)
            code = np.repeat(np.arange(sim.sizes.size), sim.sizes)
            totals = np.bincount(code, weights=sim.diffs).astype(np.float64, copy=False)
            ratio = ratio_confidence_sequence(
                totals,
                sim.sizes.astype(np.float64),
                ALPHA,
                prior_variance=prior_variance,
                looks=units,
            )
            flat = confidence_sequence(sim.diffs, ALPHA, prior_variance=prior_variance, looks=cases)
            by_cluster += any(
                _hull_high(totals, sim.sizes, g) < 0
                for g, high in zip(units, ratio.high.tolist(), strict=True)
                if high < 0
            )
            by_case += bool(np.any(flat.high < 0))
        out[shape] = (by_cluster / trials, by_case / trials)
        print(
            f"  {shape:10s} {clusters} clusters, batch {batch}: false fail by cluster "
            f"{rate(by_cluster, trials)}; read as independent cases {rate(by_case, trials)}"
        )
    return out


RAG_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rag_answers"
# metric: the scale its values divide by to lie in [0, 1] (the judge grades 1-5)
RAG_METRICS = {"contains_all": 1.0, "token_f1": 1.0, "correctness": 4.0}


def rag_differences(config: str) -> dict[str, FloatArray]:
    """Per metric, the example's per-case differences of ``config``'s run against its
    committed baseline, in [-1, 1]; the judge replayed from the committed cache, offline."""
    from evalkit import read_artifact

    env = {**os.environ, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_API_KEY": "x"}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.json"
        subprocess.run(
            [
                *(sys.executable, "-m", "evalkit", "run", "--config", config),
                *("--judge-cache-only", "--out", str(out)),
            ],
            cwd=RAG_EXAMPLE,
            env=env,
            check=True,
            capture_output=True,
        )
        cand = read_artifact(out).result
    base = read_artifact(RAG_EXAMPLE / "baseline.json").result
    return {
        metric: np.array(
            [(v - base.values(metric)[k]) / scale for k, v in cand.values(metric).items()]
        )
        for metric, scale in RAG_METRICS.items()
    }


def rag_replay(trials: int, seed: int, construction: str = "asymptotic") -> None:
    """The share of a 2,000-case set "like examples/rag_answers" run before every check
    reading ``metric`` settles, batch 100."""
    rng = np.random.default_rng([seed, 6])
    n, batch = 2000, 100
    for config, effect in (("evalkit-regressed.yaml", None), ("evalkit.yaml", 0.05)):
        for metric, diffs in rag_differences(config).items():
            stops = [
                monitor(rng.choice(diffs, n), batch, min_effect=effect, construction=construction)
                for _ in range(trials)
            ]
            share = np.array([s.cases for s in stops]) / n
            outcomes = sorted({str(s.outcome) for s in stops})
            print(
                f"  {config:23s} {metric:12s} mean diff {diffs.mean():+.3f} (min_effect "
                f"{effect}): median share run {np.median(share):.0%}, outcomes {outcomes}"
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/calibration/early_stopping.py")
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--orders", type=int, default=20)
    parser.add_argument("--seed", type=int, default=47)
    args = parser.parse_args(argv)
    started = time.process_time()
    print(f"alpha {ALPHA} (each side {ALPHA / 2}); trials {args.trials}")
    for construction in DIFF_RANGE:
        print(f"=== {construction} confidence sequence")
        print("1. false fails under a true null, monitored after every batch (nominal ≤ 2.5%):")
        for n, batch in ((1000, 50), (1000, 10), (100, 10)):
            false_fails(args.trials, n, batch, args.seed, construction)
        print("2. wrong passes, true regression exactly min_effect (nominal ≤ 2.5%):")
        for n, batch in ((1000, 50), (1000, 10)):
            wrong_passes(args.trials, n, batch, args.seed, construction)
        print(
            "3. replays of real per-topic data (17 Robust runs, 5 metrics, 100 topics, batch 10):"
        )
        for effect in (0.01, 0.03):
            clear, agree, settled, share = replays(args.orders, 10, effect, args.seed, construction)
            print(
                f"  min_effect {effect}: {clear} replays where the full run is clear; early "
                f"verdict agrees in {agree / clear:.2%}; {settled / clear:.0%} settled before "
                f"the end; mean share of topics run {share:.0%}"
            )
        print("4. share of cases needed, 2,000 cases, batch 100:")
        savings(max(200, args.trials // 5), args.seed, construction)
    print("5. clustered cases, a true null, whole-cluster batches (nominal ≤ 2.5%):")
    for clusters, batch in ((200, 50), (200, 10), (40, 10)):
        cluster_false_fails(args.trials, clusters, batch, args.seed)
    for construction in DIFF_RANGE:
        print(f"6. examples/rag_answers resampled to 2,000 cases, batch 100 ({construction}):")
        rag_replay(max(100, args.trials // 20), args.seed, construction)
    print("for comparison, a fixed-n t interval re-checked after every batch:")
    naive_false_fails(args.trials, 1000, 50, args.seed)
    print(f"CPU {time.process_time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
