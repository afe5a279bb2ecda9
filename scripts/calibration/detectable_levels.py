"""Alternatives to the detectable effect's level correction, measured on the same draws.

    uv run python scripts/calibration/detectable_levels.py --level jackknife \\
        --trials 4000 --shapes heavy-t2,binary,continuous --sizes 15 [--heldout]

A verdict's "detects ≥" (:func:`evalkit.stats.power.detectable_regression`) is a quantile
of paired t's bad interval end over the eval's own centred differences resampled, at a
level raised for the uncertainty of the sample's own spread (the delta-method variance of
s from the G2 kurtosis: ``g2``, what ships).  Each ``--level`` below swaps only how that
claim is made, and :func:`calibrate.realised_power` (``own=True``, the calibration cell's
seed) measures how often a second eval of the same two systems catches it:

``g2``         the shipped level.
``jackknife``  the same formula with v the jackknife variance of s over s² (Efron–Stein:
               conservative in expectation).
``bootvar``    the same formula with v the resampled worlds' own variance of s*/s.
``scale``      claim c·s, c such that the worlds' own claims c·s*_j are caught ``power``
               of the time on average by the worlds' bad ends (a bootstrap calibration).
``double``     prepivoting (Beran 1987): the level L at which an eval reporting its own
               bootstrap quantile L is caught ``power`` of the time in the bootstrap world
               (1,000 outer worlds × 100 inner each).
``student``    the quantile at Φ(t(power, n − 1)), no spread correction.
``fixed-0.9``, ``fixed-0.95``  a fixed level (for scale, not a proposal).

docs/design/statistics.md ("Power") quotes the figures.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable

import calibrate
import numpy as np
from calibrate import FloatArray

from evalkit.stats import power as P
from evalkit.stats.stream import PURPOSE_POWER, resolve_seed, substream
from evalkit.stats.tdist import normal_cdf, normal_quantile, t_quantile

Claim = Callable[..., float]


def _worlds(
    d: FloatArray, alpha: float, hib: bool, n_sim: int, seed: int
) -> tuple[FloatArray, FloatArray, FloatArray, np.random.Generator]:
    """(bad ends, sds, the worlds themselves, the generator), as detectable_regression."""
    n = d.shape[0]
    gen = substream(resolve_seed(seed), PURPOSE_POWER)
    centred = (d - d.mean()) * math.sqrt(n / (n - 1))
    reach = t_quantile(1 - alpha / 2, n - 1) / math.sqrt(n)
    world = centred[gen.integers(0, n, size=(n_sim, n), dtype=np.int64)]
    mean = world.mean(axis=1)
    sd = world.std(axis=1, ddof=1)
    bad = mean + reach * sd if hib else reach * sd - mean
    return bad, sd, world, gen


def _level_from_v(v: float, n: int, alpha: float, goal: float) -> float:
    """The shipped model's level for a given relative variance v of s."""
    b = -v / 2.0
    q = t_quantile(1 - alpha / 2, n - 1)
    target = normal_quantile(goal)

    def realised(z: float) -> float:
        return (z + (q + z) * b) / math.sqrt(1.0 + (q + z) ** 2 * v)

    low, high = target, target + 6.0
    if realised(high) < target:
        return 0.999
    for _ in range(60):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if realised(mid) < target else (low, mid)
    return min(0.999, normal_cdf(high))


def _jackknife_v(d: FloatArray) -> float:
    n = d.shape[0]
    e = d - d.mean()
    ss = float(e @ e)
    loo = np.sqrt(np.maximum(ss - n / (n - 1) * e * e, 0.0) / (n - 2))
    spread = float(np.sum((loo - loo.mean()) ** 2))
    return float((n - 1) / n * spread / (ss / (n - 1)))


def claim_with(level: str) -> Claim:
    def claim(
        d: FloatArray,
        alpha: float,
        *,
        higher_is_better: bool,
        method: str = "t",
        power: float = 0.8,
        n_sim: int = 1000,
        seed: int = 0,
    ) -> float:
        n = d.shape[0]
        if level == "g2" or float(np.std(d)) == 0.0:
            return P.detectable_regression(
                d, alpha, higher_is_better=higher_is_better, method=method, seed=seed
            )
        bad, sd, world, gen = _worlds(d, alpha, higher_is_better, n_sim, seed)
        s = float(np.std(d, ddof=1))
        if level == "jackknife":
            return float(np.quantile(bad, _level_from_v(_jackknife_v(d), n, alpha, power)))
        if level == "bootvar":
            v = float(np.var(sd / s))
            return float(np.quantile(bad, _level_from_v(v, n, alpha, power)))
        if level == "student":
            return float(np.quantile(bad, normal_cdf(t_quantile(power, n - 1))))
        if level.startswith("fixed-"):
            return float(np.quantile(bad, float(level.removeprefix("fixed-"))))
        ends = np.sort(bad)
        if level == "scale":
            c = _scale(ends, sd, power)
            return float(ends[-1]) if c is None else c * s
        if level == "double":
            return _double(ends, bad, world, gen, alpha, higher_is_better, power)
        raise SystemExit(f"error: unknown level {level!r}")

    return claim


def _scale(ends: FloatArray, sd: FloatArray, power: float) -> float | None:
    """c with the worlds' claims c·s*_j caught ``power`` on average (None: unreachable)."""
    worlds = ends.shape[0]
    positive = sd[sd > 0]
    if positive.size == 0:
        return None
    high = float(ends[-1] / positive.min()) * (1 + 1e-12)

    def caught(c: float) -> float:
        return float(np.searchsorted(ends, c * sd, side="right").sum()) / float(worlds) ** 2

    if caught(high) < power:
        return None
    low = 0.0
    for _ in range(60):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if caught(mid) < power else (low, mid)
    return high


def _double(
    ends: FloatArray,
    bad: FloatArray,
    world: FloatArray,
    gen: np.random.Generator,
    alpha: float,
    hib: bool,
    power: float,
    inner: int = 100,
) -> float:
    n_sim, n = world.shape
    reach = t_quantile(1 - alpha / 2, n - 1) / math.sqrt(n)
    mean = world.mean(axis=1)
    centred = (world - mean[:, None]) * math.sqrt(n / (n - 1))
    idx = gen.integers(0, n, size=(n_sim, inner, n), dtype=np.int64)
    idx += (np.arange(n_sim, dtype=np.int64) * n)[:, None, None]
    inner_worlds = centred.ravel()[idx]
    im = inner_worlds.mean(axis=2)
    squares = np.einsum("ijk,ijk->ij", inner_worlds, inner_worlds)
    isd = np.sqrt(np.maximum(squares - n * im * im, 0.0) / (n - 1))
    inner_bad = np.sort((im if hib else -im) + reach * isd, axis=1)
    caught = [
        float(np.searchsorted(ends, inner_bad[:, k], side="right").mean()) / n_sim
        for k in range(inner)
    ]
    k = int(np.searchsorted(np.asarray(caught), power))
    chosen = 0.999 if k >= inner else (k + 0.5) / inner
    return float(np.quantile(bad, chosen))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/calibration/detectable_levels.py")
    parser.add_argument("--level", default="g2")
    parser.add_argument("--trials", type=int, default=4000)
    parser.add_argument("--shapes", default="heavy-t2,binary,continuous")
    parser.add_argument("--sizes", default="15")
    parser.add_argument("--heldout", action="store_true", help="shapes of heldout_null.py")
    args = parser.parse_args(argv)
    if args.heldout:
        from heldout_null import SHAPES as table
    else:
        table = calibrate.ALL_SHAPES
    calibrate.detectable_regression = claim_with(args.level)  # type: ignore[attr-defined]
    for name in args.shapes.split(","):
        for n in (int(x) for x in args.sizes.split(",")):
            if n > calibrate.MAX_N.get(name, n):
                continue
            seed = calibrate.seed_for("po", name, n)
            _, rate = calibrate.realised_power("t", table[name], n, args.trials, seed, own=True)
            se = math.sqrt(rate * (1 - rate) / args.trials)
            print(f"{args.level} {name} n={n}: {100 * rate:.1f} ± {100 * se:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
