"""Calibration of inference with declared clusters (issue 46): false fails, coverage, power.

Under a true null (nothing changed) cases come in G clusters whose cases share an
effect (intra-cluster correlation ρ of the per-case differences).  For every cell the
script reports, on the same simulated data sets:

* the cluster-robust t (CR2, Bell-McCaffrey df: what a gate with ``clusters:`` decides
  with) -- one-sided false fails on each side against 2.5%, and the coverage of its
  95% interval;
* the unclustered paired t (what the gate decides with when no clusters are declared);
* on a reduced grid, the cluster bootstrap (percentile) and cluster sign-flips;
* the power cost of declaring clusters when there are none (ρ = 0, an effect plain t
  finds 80% of the time).

Shapes:

``continuous``
    d = √ρ·u_g + √(1 − ρ)·e, u and e standard normal.  Only the clusters' totals and
    sums of squares are drawn (exactly distributed: S_g = n_g√ρ·u_g + √((1−ρ)n_g)·z_g,
    Σd² = S_g²/n_g + (1 − ρ)·χ²(n_g − 1)), so 200 clusters of 50 cost as little as 10.
``skewed`` (reported, not claimed)
    As ``continuous`` with the cluster effects u_g ~ Exp(1) − 1: a change that costs a
    few documents a lot and helps the rest a little.  Where it fails is where too few
    clusters start.
``binary``
    A pass/fail metric: each system has its own success rate per cluster, p ~ Beta with
    mean 0.6 and ICC ρ; the per-case scores are independent given the rates.  The
    difference then has intra-cluster correlation ρ.  Drawn as the cluster's counts of
    (1, 0) and (0, 1) pairs.

Sizes: ``equal`` (10 cases a cluster) or ``unequal`` (1-50 cases, log-uniform: many
small clusters and a few large ones, drawn once per cell: a golden set is a fixed design).

Run the full table (stated in docs/clusters.md; about 4 CPU-minutes)::

    uv run python scripts/calibration/clustered.py --trials 20000

``tests/stats/test_clustered_calibration.py`` runs a reduced grid (slow tier).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from evalkit.stats.clustered import (
    ClusterT,
    bell_mccaffrey_df,
    cluster_bootstrap_means,
)
from evalkit.stats.compare import percentile_interval
from evalkit.stats.sign_flips import SignFlipNull, SignFlips
from evalkit.stats.tdist import normal_quantile, t_quantile

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

ALPHA = 0.05
BINARY_MEAN = 0.6
EQUAL_SIZE = 10
MAX_SIZE = 50


@dataclass(frozen=True)
class Cell:
    shape: str  # "continuous" | "binary"
    icc: float
    clusters: int
    sizes: str  # "equal" | "unequal"

    def label(self) -> str:
        return f"{self.shape} ρ={self.icc:g} G={self.clusters} {self.sizes}"


def cluster_sizes(cell: Cell, seed: int) -> IntArray:
    if cell.sizes == "equal":
        return np.full(cell.clusters, EQUAL_SIZE, dtype=np.int64)
    gen = np.random.default_rng([seed, cell.clusters, 7])
    sizes = np.rint(np.exp(gen.uniform(0.0, math.log(MAX_SIZE), cell.clusters)))
    return np.clip(sizes, 1, MAX_SIZE).astype(np.int64)


def draw(
    cell: Cell, sizes: IntArray, trials: int, gen: np.random.Generator, effect: float = 0.0
) -> tuple[FloatArray, FloatArray]:
    """(cluster totals of d, trials × G; Σ d² per trial) for ``trials`` data sets."""
    n_g = sizes.astype(np.float64)
    g = sizes.shape[0]
    if cell.shape in ("continuous", "skewed"):
        rho = cell.icc
        if cell.shape == "skewed":
            u = gen.standard_exponential((trials, g)) - 1.0
        else:
            u = gen.standard_normal((trials, g))
        z = gen.standard_normal((trials, g))
        totals = n_g * math.sqrt(rho) * u + np.sqrt((1.0 - rho) * n_g) * z + effect * n_g
        within = (1.0 - rho) * gen.chisquare(np.maximum(n_g - 1.0, 1.0), (trials, g))
        within = np.where(n_g > 1, within, 0.0)
        centred = totals - effect * n_g
        squares = (centred * centred / n_g + within).sum(axis=1)
        # Σd² of d + effect: Σ(d0 + δ)² = Σd0² + 2δ·Σd0 + nδ²
        n = float(n_g.sum())
        squares = squares + 2.0 * effect * centred.sum(axis=1) + n * effect * effect
        return totals, squares
    rates_a = _rates(cell.icc, BINARY_MEAN + effect / 2.0, (trials, g), gen)
    rates_b = _rates(cell.icc, BINARY_MEAN - effect / 2.0, (trials, g), gen)
    p10 = rates_a * (1.0 - rates_b)
    p01 = rates_b * (1.0 - rates_a)
    wins = gen.binomial(np.broadcast_to(sizes, (trials, g)), p10)
    rest = np.broadcast_to(sizes, (trials, g)) - wins
    losses = gen.binomial(rest, np.clip(p01 / np.maximum(1.0 - p10, 1e-300), 0.0, 1.0))
    totals = (wins - losses).astype(np.float64)
    return totals, (wins + losses).sum(axis=1).astype(np.float64)


def _rates(icc: float, mean: float, shape: tuple[int, int], gen: np.random.Generator) -> FloatArray:
    if icc == 0.0:
        return np.full(shape, mean)
    strength = 1.0 / icc - 1.0  # a + b of the Beta: ICC = 1 / (a + b + 1)
    out: FloatArray = gen.beta(mean * strength, (1.0 - mean) * strength, shape)
    return out


@dataclass(frozen=True)
class Rates:
    low: float  # share rejecting on the low side (interval wholly below 0)
    high: float
    trials: int

    @property
    def worst(self) -> float:
        return max(self.low, self.high)

    @property
    def coverage(self) -> float:
        return 1.0 - self.low - self.high


def _rates_of(low_side: NDArray[np.bool_], high_side: NDArray[np.bool_]) -> Rates:
    return Rates(float(np.mean(low_side)), float(np.mean(high_side)), int(low_side.shape[0]))


def plain_t(totals: FloatArray, squares: FloatArray, n: int) -> tuple[FloatArray, FloatArray]:
    mean = totals.sum(axis=1) / n
    var = np.maximum(squares - n * mean * mean, 0.0) / (n - 1)
    half = t_quantile(1.0 - ALPHA / 2.0, n - 1) * np.sqrt(var / n)
    return mean - half, mean + half


def cluster_t(totals: FloatArray, sizes: IntArray) -> tuple[FloatArray, FloatArray]:
    return ClusterT.of(totals, sizes).bounds(ALPHA)


def _sided(low: FloatArray, high: FloatArray) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    return high < 0, low > 0


def _chunks(trials: int, g: int) -> Iterator[int]:
    step = max(1, 2**22 // max(1, g))
    for start in range(0, trials, step):
        yield min(step, trials - start)


@dataclass(frozen=True)
class NullRow:
    cell: Cell
    n: int
    df: float
    clustered: Rates
    unclustered: Rates


def null_row(cell: Cell, trials: int, seed: int) -> NullRow:
    sizes = cluster_sizes(cell, seed)
    n = int(sizes.sum())
    gen = np.random.default_rng([seed, hash_cell(cell)])
    found: dict[str, list[tuple[NDArray[np.bool_], NDArray[np.bool_]]]] = {"c": [], "u": []}
    for count in _chunks(trials, cell.clusters):
        totals, squares = draw(cell, sizes, count, gen)
        found["c"].append(_sided(*cluster_t(totals, sizes)))
        found["u"].append(_sided(*plain_t(totals, squares, n)))
    rates = {
        k: _rates_of(np.concatenate([lo for lo, _ in v]), np.concatenate([hi for _, hi in v]))
        for k, v in found.items()
    }
    df = bell_mccaffrey_df(sizes)
    return NullRow(cell, n, df, rates["c"], rates["u"])


def hash_cell(cell: Cell) -> int:
    shape = SHAPES_ALL.index(cell.shape)
    kind = 0 if cell.sizes == "equal" else 1
    return shape * 10**7 + kind * 10**6 + round(cell.icc * 100) * 10**3 + cell.clusters


@dataclass(frozen=True)
class ResamplingRow:
    cell: Cell
    bootstrap: Rates
    sign_flip: Rates


def resampling_row(cell: Cell, trials: int, resamples: int, seed: int) -> ResamplingRow:
    """The cluster bootstrap's and cluster sign-flips' rates (resampling per data set)."""
    sizes = cluster_sizes(cell, seed)
    gen = np.random.default_rng([seed, hash_cell(cell), 1])
    totals, _ = draw(cell, sizes, trials, gen)
    boot_low = np.empty(trials)
    boot_high = np.empty(trials)
    flip_low = np.zeros(trials, dtype=bool)
    flip_high = np.zeros(trials, dtype=bool)
    for i in range(trials):
        row = totals[i : i + 1]
        resampled = cluster_bootstrap_means(row, sizes, resamples, gen)
        lo, hi = percentile_interval(resampled, ALPHA, axis=1)
        boot_low[i], boot_high[i] = float(lo[0]), float(hi[0])
        null = SignFlipNull.of(row, SignFlips.draw(cell.clusters, resamples, gen), sizes)
        p = float(null.p(np.zeros(1))[0])
        mean = float(row.sum() / sizes.sum())  # the sign of the observed mean
        flip_low[i] = p <= ALPHA and mean < 0
        flip_high[i] = p <= ALPHA and mean > 0
    boot = _rates_of(*_sided(boot_low, boot_high))
    flips = Rates(float(flip_low.mean()), float(flip_high.mean()), trials)
    return ResamplingRow(cell, boot, flips)


@dataclass(frozen=True)
class PowerRow:
    cell: Cell
    effect: float
    clustered: float
    unclustered: float


def power_row(cell: Cell, trials: int, seed: int) -> PowerRow:
    """Power at the effect plain t detects 80% of the time, when the cases are in fact
    independent (ρ = 0) but declared as clusters."""
    assert cell.icc == 0.0
    sizes = cluster_sizes(cell, seed)
    n = int(sizes.sum())
    sd = 1.0 if cell.shape == "continuous" else math.sqrt(2.0 * BINARY_MEAN * (1 - BINARY_MEAN))
    effect = (normal_quantile(1 - ALPHA / 2) + normal_quantile(0.8)) * sd / math.sqrt(n)
    gen = np.random.default_rng([seed, hash_cell(cell), 2])
    hits_c = hits_u = 0
    for count in _chunks(trials, cell.clusters):
        totals, squares = draw(cell, sizes, count, gen, effect)
        hits_c += int(np.count_nonzero(cluster_t(totals, sizes)[0] > 0))
        hits_u += int(np.count_nonzero(plain_t(totals, squares, n)[0] > 0))
    return PowerRow(cell, effect, hits_c / trials, hits_u / trials)


ICCS = (0.0, 0.2, 0.5, 0.8)
CLUSTER_COUNTS = (6, 8, 10, 20, 50, 200)
SHAPES = ("continuous", "binary")
#: ``skewed`` (cluster effects Exp(1) − 1) is reported beside the claimed shapes: it is
#: where too few clusters start to fail.
SHAPES_ALL = ("continuous", "binary", "skewed")
SIZES = ("equal", "unequal")


def grid(
    shapes: Iterable[str] = SHAPES,
    iccs: Iterable[float] = ICCS,
    counts: Iterable[int] = CLUSTER_COUNTS,
    sizes: Iterable[str] = SIZES,
) -> list[Cell]:
    return [
        Cell(shape, icc, g, size)
        for shape in shapes
        for size in sizes
        for icc in iccs
        for g in counts
    ]


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20_000, help="data sets per null cell")
    parser.add_argument("--resampling-trials", type=int, default=1_000)
    parser.add_argument("--resamples", type=int, default=999)
    parser.add_argument("--power-trials", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=46)
    parser.add_argument("--skip-resampling", action="store_true")
    args = parser.parse_args(argv)
    started = time.process_time()

    print(
        f"## Null: one-sided false fails (low / high) and coverage, {args.trials} trials a cell\n"
    )
    print(
        "| shape | sizes | ρ | G | n | BM df | cluster-t low / high | coverage "
        "| unclustered t low / high | coverage |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for cell in grid(shapes=SHAPES_ALL):
        r = null_row(cell, args.trials, args.seed)
        c, u = r.clustered, r.unclustered
        print(
            f"| {cell.shape} | {cell.sizes} | {cell.icc:g} | {cell.clusters} | {r.n} | {r.df:.1f} "
            f"| {_pct(c.low)} / {_pct(c.high)} | {_pct(c.coverage)} "
            f"| {_pct(u.low)} / {_pct(u.high)} | {_pct(u.coverage)} |",
            flush=True,
        )

    if not args.skip_resampling:
        print(
            f"\n## Resampling paths under the null: {args.resampling_trials} trials a cell, "
            f"{args.resamples} resamples\n"
        )
        print(
            "| shape | sizes | ρ | G | cluster bootstrap low / high | coverage "
            "| cluster sign-flip low / high |"
        )
        print("|---|---|---|---|---|---|---|")
        for cell in grid(iccs=(0.2, 0.8), counts=(10, 50)):
            rr = resampling_row(cell, args.resampling_trials, args.resamples, args.seed)
            b, f = rr.bootstrap, rr.sign_flip
            print(
                f"| {cell.shape} | {cell.sizes} | {cell.icc:g} | {cell.clusters} "
                f"| {_pct(b.low)} / {_pct(b.high)} | {_pct(b.coverage)} "
                f"| {_pct(f.low)} / {_pct(f.high)} |",
                flush=True,
            )

    print(
        f"\n## Power cost of declaring clusters when there are none (ρ = 0), "
        f"{args.power_trials} trials a cell\n"
    )
    print("| shape | sizes | G | n | effect | unclustered t | cluster-t | cost |")
    print("|---|---|---|---|---|---|---|---|")
    for cell in grid(iccs=(0.0,)):
        p = power_row(cell, args.power_trials, args.seed)
        n = int(cluster_sizes(cell, args.seed).sum())
        print(
            f"| {cell.shape} | {cell.sizes} | {cell.clusters} | {n} | {p.effect:.4f} "
            f"| {_pct(p.unclustered)} | {_pct(p.clustered)} "
            f"| {100 * (p.unclustered - p.clustered):.1f} points |",
            flush=True,
        )
    print(f"\nCPU: {time.process_time() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
