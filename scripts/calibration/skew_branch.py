"""The one branch the default could have had: BCa above |skewness| > 1, else paired t.

    uv run python scripts/calibration/skew_branch.py [--trials 2000]

Measured against plain paired t (the default) on the same draws: the larger one-sided
false-fail rate (nominal 2.5%), the share of samples the branch takes, and the share of
evals catching a true regression of 0.5·σ (σ the shape's true spread).  BCa: the
percentile bootstrap (999 resamples) with bias correction z0 from the share of resampled
means below the sample's and acceleration a = Σ(d − d̄)³ / (6·(Σ(d − d̄)²)^1.5) (the
jackknife's, for a mean).  docs/design/statistics.md ("The default verdict") quotes it.
"""

from __future__ import annotations

import argparse

import numpy as np
from calibrate import ALL_SHAPES, FloatArray, _counts, population_sd, seed_for

from evalkit.stats.procedures import t_bounds
from evalkit.stats.tdist import normal_cdf, normal_quantile

SHAPES = (
    "right-skewed",
    "left-skewed",
    "bounded-right",
    "heavy-t2",
    "tie-heavy",
    "ndcg-shared",
    "binary",
    "trec-recall@100",
    "trec-mrr@1000",
)
LINE = 1.0  # |sample skewness| above which the branch decides


def _quantile(values: FloatArray) -> FloatArray:
    return np.array([normal_quantile(float(x)) for x in values])


def _cdf(values: FloatArray) -> FloatArray:
    return np.array([normal_cdf(float(x)) for x in values])


def bca_bounds(
    data: FloatArray, rng: np.random.Generator, alpha: float = 0.05
) -> tuple[FloatArray, FloatArray]:
    n = data.shape[1]
    b = 999
    mean = data.mean(axis=1)
    resampled = np.sort(data @ _counts(n, b, rng).T / n, axis=1)
    share = (resampled < mean[:, None]).mean(axis=1) + 0.5 * (resampled == mean[:, None]).mean(
        axis=1
    )
    z0 = _quantile(np.clip(share, 1.0 / (b + 1), b / (b + 1)))
    centred = data - mean[:, None]
    m2, m3 = (centred**2).sum(axis=1), (centred**3).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(m2 > 0, m3 / (6.0 * m2**1.5), 0.0)
    ends = []
    rows = np.arange(data.shape[0])
    for q in (alpha / 2, 1 - alpha / 2):
        z = z0 + normal_quantile(q)
        position = np.clip(_cdf(z0 + z / (1.0 - a * z)) * (b - 1), 0, b - 1)
        low = np.floor(position).astype(np.int64)
        high = np.minimum(low + 1, b - 1)
        weight = position - low
        ends.append(resampled[rows, low] * (1 - weight) + resampled[rows, high] * weight)
    return ends[0], ends[1]


def skewness(data: FloatArray) -> FloatArray:
    centred = data - data.mean(axis=1, keepdims=True)
    m2, m3 = (centred**2).mean(axis=1), (centred**3).mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = np.where(m2 > 0, m3 / m2**1.5, 0.0)
    return out


def branch_bounds(data: FloatArray, rng: np.random.Generator) -> tuple[FloatArray, FloatArray]:
    t_low, t_high = t_bounds(data, 0.05)
    b_low, b_high = bca_bounds(data, rng)
    taken = np.abs(skewness(data)) > LINE
    return np.where(taken, b_low, t_low), np.where(taken, b_high, t_high)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--trials", type=int, default=2000)
    args = parser.parse_args()
    print(f"{args.trials:,} trials a cell: false fails t / branch (taken), power t / branch")
    for name in SHAPES:
        shape = ALL_SHAPES[name]
        cells = []
        for n in (15, 30, 50):
            rng = seed_for("bca", name, n)
            data = shape(args.trials, n, rng)
            t_low, t_high = t_bounds(data, 0.05)
            low, high = branch_bounds(data, rng)
            t_ff = max(np.mean(t_high < 0), np.mean(t_low > 0))
            b_ff = max(np.mean(high < 0), np.mean(low > 0))
            taken = np.mean(np.abs(skewness(data)) > LINE)
            shifted = data - 0.5 * population_sd(shape)
            power_t = np.mean(t_bounds(shifted, 0.05)[1] < 0)
            power_b = np.mean(branch_bounds(shifted, rng)[1] < 0)
            cells.append(
                f"n={n}: {100 * t_ff:.1f} / {100 * b_ff:.1f} ({100 * taken:.0f}%), "
                f"{100 * power_t:.0f} / {100 * power_b:.0f}"
            )
        print(f"{name:16s} " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
