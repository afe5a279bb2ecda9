"""Null shapes outside the calibration run: one-sided false fails and coverage of paired t.

    uv run python scripts/calibration/heldout_null.py [--trials 10000]

The default verdict (paired t) has no constant fitted to any shape; these shapes were
never used to choose it, and docs/calibration.md reports them ("Held-out shapes") beside
the training shapes of ``calibrate.py``.  (Under the rule paired t replaced, issue #23,
the last eight were used to choose that rule's tie constants; nothing of that rule is left.)
Every shape has true mean difference 0 by construction.  Columns per size: false fails of
a higher-is-better / a lower-is-better metric (nominal 2.5% each) and coverage (nominal
95%).  ``!`` marks a cell above the false-fail targets (4% at n = 15, 3.5% from n = 30),
``c`` one that holds them but covers outside 95 ± 1.5%.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

import numpy as np
from calibrate import ALPHA, seed_for
from numpy.typing import NDArray

from evalkit.stats.procedures import t_bounds

Array = NDArray[np.float64]
Shape = Callable[[int, int, np.random.Generator], Array]
SIZES = (15, 30, 50, 100)


def _lognormal(t: int, n: int, g: np.random.Generator) -> Array:
    """exp(N(0, 1)) − e^½: skewness 6.2, a latency-like ratio."""
    out: Array = np.exp(g.normal(0.0, 1.0, (t, n))) - math.exp(0.5)
    return out


def _laplace(t: int, n: int, g: np.random.Generator) -> Array:
    return g.laplace(0.0, 0.1, (t, n))


def _zero_inflated(t: int, n: int, g: np.random.Generator) -> Array:
    """60% of cases tie at 0, the others N(0, 0.1²)."""
    return np.where(g.random((t, n)) < 0.6, 0.0, g.normal(0.0, 0.1, (t, n)))


def _p_at_10(t: int, n: int, g: np.random.Generator) -> Array:
    """P@10 of two systems sharing each query's difficulty p ~ Beta(1, 2): steps of 0.1."""
    p = g.beta(1.0, 2.0, (t, n))
    return (g.binomial(10, p) - g.binomial(10, p)) / 10.0


def _mrr(t: int, n: int, g: np.random.Generator) -> Array:
    """Reciprocal rank of the first relevant result, rank ~ Geometric(q) per system."""
    q = g.beta(2.0, 2.0, (t, n)) * 0.6 + 0.05
    a = 1.0 / np.minimum(g.geometric(q), 1000)
    b = 1.0 / np.minimum(g.geometric(q), 1000)
    return a - b


def _ceiling(t: int, n: int, g: np.random.Generator) -> Array:
    """Scores clipped to [0, 1] around a shared level near the ceiling (many ties at 1)."""
    level = g.normal(0.8, 0.3, (t, n))
    a = np.clip(level + g.normal(0.0, 0.15, (t, n)), 0.0, 1.0)
    b = np.clip(level + g.normal(0.0, 0.15, (t, n)), 0.0, 1.0)
    return a - b


def _contaminated(t: int, n: int, g: np.random.Generator) -> Array:
    """Most cases barely move, one in ten moves 30 times as much, either way (symmetric)."""
    small = g.normal(0.0, 0.01, (t, n))
    large = g.normal(0.0, 0.3, (t, n))
    return np.where(g.random((t, n)) < 0.9, small, large)


def _skew_mix(t: int, n: int, g: np.random.Generator) -> Array:
    """80% small losses N(−0.05, 0.02²), 20% wins N(0.2, 0.1²): mean 0, skewed."""
    wins = g.normal(0.2, 0.1, (t, n))
    losses = g.normal(-0.05, 0.02, (t, n))
    return np.where(g.random((t, n)) < 0.2, wins, losses)


def _t15(t: int, n: int, g: np.random.Generator) -> Array:
    """Student t with 1.5 degrees of freedom (× 0.1): heavier tails than the suite's t₂."""
    return g.standard_t(1.5, (t, n)) * 0.1


def _steps(t: int, n: int, g: np.random.Generator) -> Array:
    """−0.1, 0, 0, +0.1: half the cases tie, the rest one step either way."""
    return g.choice(np.array([-0.1, 0.0, 0.0, 0.1]), (t, n))


def _latency(t: int, n: int, g: np.random.Generator) -> Array:
    """Milliseconds: a shared lognormal case cost times each system's lognormal noise."""
    case = g.lognormal(3.0, 0.5, (t, n))
    return case * g.lognormal(0.0, 0.3, (t, n)) - case * g.lognormal(0.0, 0.3, (t, n))


def _chi2_1(t: int, n: int, g: np.random.Generator) -> Array:
    """(χ²₁ − 1) × 0.1: skewness 2.8, no ties."""
    return (g.chisquare(1.0, (t, n)) - 1.0) * 0.1


def _zi_gamma(t: int, n: int, g: np.random.Generator) -> Array:
    """70% of cases tie at 0, the others (Gamma(2) − 2) × 0.1: skewness 2.6 with the ties."""
    return np.where(g.random((t, n)) < 0.7, 0.0, (g.gamma(2.0, 1.0, (t, n)) - 2.0) * 0.1)


def _zi_lognormal(t: int, n: int, g: np.random.Generator) -> Array:
    """Half the cases tie at 0, the others exp(N(0, 0.75²)) less its mean: skewness 4.8."""
    x = np.exp(g.normal(0.0, 0.75, (t, n))) - math.exp(0.75**2 / 2)
    return np.where(g.random((t, n)) < 0.5, 0.0, x)


def _ties_and_wins(t: int, n: int, g: np.random.Generator) -> Array:
    """Half the cases tie at 0; of the others 30% win N(0.35, 0.1²), 70% lose
    N(−0.15, 0.05²): a change that touches half the cases, mean 0."""
    changed = np.where(
        g.random((t, n)) < 0.3, g.normal(0.35, 0.1, (t, n)), g.normal(-0.15, 0.05, (t, n))
    )
    return np.where(g.random((t, n)) < 0.5, 0.0, changed)


def _rounded_skew(t: int, n: int, g: np.random.Generator) -> Array:
    """40% tie at 0, the others Exp(1) − 1 rounded to 0.1: a skewed lattice."""
    x = np.round(g.exponential(1.0, (t, n)) - 1.0, 1)
    return np.where(g.random((t, n)) < 0.4, 0.0, x)


def _lognormal_half(t: int, n: int, g: np.random.Generator) -> Array:
    """exp(N(0, 0.5²)) less its mean: skewness 1.75, a tail on a nearly symmetric core."""
    out: Array = np.exp(g.normal(0.0, 0.5, (t, n))) - math.exp(0.125)
    return out


def _weibull_half(t: int, n: int, g: np.random.Generator) -> Array:
    """Weibull with shape ½, less its mean 2: skewness 6.6."""
    out: Array = g.weibull(0.5, (t, n)) - 2.0
    return out


def _lomax4(t: int, n: int, g: np.random.Generator) -> Array:
    """Lomax (Pareto II) with shape 4, less its mean ⅓: skewness 7.1, a power-law tail."""
    out: Array = g.pareto(4.0, (t, n)) - 1.0 / 3.0
    return out


def _judge_1_10(t: int, n: int, g: np.random.Generator) -> Array:
    """Two LLM-judge scores 1-10 sharing each case's quality N(6, 2²), each N(0, 1) noise,
    rounded and clipped: a symmetric lattice of integers."""
    quality = g.normal(6.0, 2.0, (t, n))
    a = np.clip(np.round(quality + g.normal(0.0, 1.0, (t, n))), 1, 10)
    b = np.clip(np.round(quality + g.normal(0.0, 1.0, (t, n))), 1, 10)
    out: Array = a - b
    return out


SHAPES: dict[str, Shape] = {
    "lognormal": _lognormal,
    "laplace": _laplace,
    "zero-inflated": _zero_inflated,
    "p@10": _p_at_10,
    "mrr": _mrr,
    "ceiling": _ceiling,
    "contaminated": _contaminated,
    "skew-mix": _skew_mix,
    "t(1.5)": _t15,
    "steps": _steps,
    "latency": _latency,
    "chi2(1)": _chi2_1,
    "zi-gamma": _zi_gamma,
    "zi-lognormal": _zi_lognormal,
    "ties+wins": _ties_and_wins,
    "rounded-skew": _rounded_skew,
    "lognormal-0.5": _lognormal_half,
    "weibull-0.5": _weibull_half,
    "lomax-4": _lomax4,
    "judge-1-10": _judge_1_10,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10_000)
    parser.add_argument("--shapes", help="comma-separated shape names (default: all)")
    args = parser.parse_args()
    trials = args.trials
    chosen = SHAPES if args.shapes is None else {k: SHAPES[k] for k in args.shapes.split(",")}
    print(f"{trials} trials a cell; false fails hib/lib in %, coverage in %")
    for name, shape in chosen.items():
        cells = []
        for n in SIZES:
            data = shape(trials, n, seed_for("heldout", name, n))
            low, high = t_bounds(data, ALPHA)
            hib, lib = float(np.mean(high < 0.0)), float(np.mean(low > 0.0))
            cov = 100 * (1 - hib - lib)
            flag = "!" if max(hib, lib) > (0.04 if n < 30 else 0.035) else " "
            if flag == " " and abs(cov - 95.0) > 1.5:
                flag = "c"
            cells.append(f"{100 * hib:4.1f}/{100 * lib:4.1f} {cov:4.1f}{flag}")
        print(f"{name:13s} " + " | ".join(cells), flush=True)
    print("sizes: " + ", ".join(f"n = {n}" for n in SIZES))


if __name__ == "__main__":
    main()
