"""Measure latency_p95's percentile bootstrap under an exact null, by n (issue #23).

    uv run python scripts/aggregate_small_n.py [--trials 2000]

Two systems with the same latency distribution (log-normal, σ = 0.5; correlation of
the log latencies between the systems 0 or 0.7), paired by case; the gate's own
vectorised nearest-rank resampler (stats.aggregates.NearestRankAggregate) and the
spec's type-7 percentile interval at α = 0.05, 999 resamples.  Prints the one-sided
false-fail rates (interval wholly above 0 / wholly below 0), nominal 2.5% each.
Below 20 cases p95 is each run's maximum and the gate refuses the check
(stats.procedures.refuse_unbounded); these figures are why.
"""

from __future__ import annotations

import argparse

import numpy as np

from evalkit.stats.aggregates import NearestRankAggregate
from evalkit.stats.compare import percentile_interval


def rates(n: int, trials: int, corr: float, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    above = below = 0
    for _ in range(trials):
        shared = rng.normal(size=n)
        a = np.exp(0.5 * (corr**0.5 * shared + (1 - corr) ** 0.5 * rng.normal(size=n)))
        b = np.exp(0.5 * (corr**0.5 * shared + (1 - corr) ** 0.5 * rng.normal(size=n)))
        resampled = NearestRankAggregate("latency_p95", 95, a, b).bootstrap(
            rng.integers(0, n, size=(999, n))
        )
        low, high = percentile_interval(resampled[None, :], 0.05, axis=1)
        above += bool(low[0] > 0)
        below += bool(high[0] < 0)
    return above / trials, below / trials


def main() -> int:
    parser = argparse.ArgumentParser(prog="scripts/aggregate_small_n.py")
    parser.add_argument("--trials", type=int, default=2000)
    args = parser.parse_args()
    print("| n | correlation | slower (fails a lower-is-better p95) | faster |")
    print("|---:|---:|---:|---:|")
    for n in (10, 15, 19, 20, 30, 40, 60, 80):
        for corr in (0.0, 0.7):
            up, down = rates(n, args.trials, corr, seed=n)
            print(f"| {n} | {corr:.1f} | {100 * up:.1f} | {100 * down:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
