"""Measure how the gate's procedures behave when the truth is known; write docs/calibration.md.

    uv run python scripts/calibration/calibrate.py            # regenerates docs/calibration.md
    uv run python scripts/calibration/calibrate.py --quick    # fewer trials, prints only

Runs from a checkout (it is not in the wheel); the slow test tier runs a reduced version
(tests/stats/test_calibration.py).  The full run asserts the targets of issues #23
and #43: it writes the file, lists every cell that
misses one (also in the file, under "Targets this run missed") and exits 1 if any
does, so a change that moves a figure past its target cannot be published as if it
held.  ``--only power`` does the same for the realised-power claim alone.

Every figure is a Monte Carlo rate over simulated evals whose true mean
difference is set by construction, with its standard error.  The default verdict,
paired t, fits no constant to any of them.  The *training* shapes are the ones the
default and the targets were chosen on (issues #10, #23 and #43 read them); the
*held-out* shapes (``heldout_null.py``, reported in their own section) were never
used to choose anything.  The training shapes of the per-case differences
d = a − b (mean exactly 0 before any shift):

``continuous``
    two systems' scores ``logistic(difficulty + N(0, 0.5²))`` with
    ``difficulty ~ N(0, 1)`` shared by the case: symmetric, no ties.
``binary``
    hit/miss metrics (recall@1-like): each case's hit rate ``p ~ Beta(½, ½)``,
    both systems hit independently with probability p; about 75% of cases tie.
``tie-heavy``
    graded scores on a 0.1 grid: with probability 0.7 both systems score the
    case the same (d = 0), else each scores ``clip(round(difficulty + N(0, 0.2²),
    1), 0, 1)`` with ``difficulty ~ Beta(2, 2)``.
``right-skewed`` (strongly skewed: the default's measured limit, outside the claims)
    ``Exp(1) − 1``: skewness +2, many small losses and a few big wins.
``left-skewed`` (strongly skewed, outside the claims)
    ``1 − Exp(1)``: skewness −2.
``heavy-t2`` / ``heavy-t3``
    Student t with 2 / 3 degrees of freedom (× 0.1): symmetric, heavy tails (t2 has
    no finite variance); a few extreme cases make the sample skewness large.
``ndcg-shared``
    nDCG@10 of two rankers over 20 documents per query (grades 0/1/2, a query's
    share of relevant documents ``~ Beta(1, 3)``) that share most of their score
    noise: score = 0.8·grade + N(0, 1) shared + N(0, 0.35²) each; symmetric by
    exchangeability, about 22% of cases tie (the same top 10), kurtosis about 7.
``bounded-right`` / ``bounded-left`` (strongly skewed, outside the claims)
    ``±(Beta(½, 3) − 1/7)``: bounded, skewness ±1.6.
``precision@5``
    discrete: each system's P@5 ``Binomial(5, p)/5`` with ``p ~ Beta(1, 2)`` shared by
    the case, so differences move in steps of 0.2 (about 30% tie).
``bimodal`` / ``bimodal-70/30``
    two groups of cases: ±0.1 equally likely with ``N(0, 0.02²)`` around each
    (symmetric); 70% near −0.03 and 30% near +0.07 with ``N(0, 0.01²)`` around each
    (skewness about 0.8 from the groups' sizes, not from a tail; reported with the
    skewed shapes, outside the claims).
``trec-<metric>``
    real data: per-topic values of 17 TREC 2003 Robust runs (tests/data/robust03,
    100 topics); each eval draws two runs, n topics without replacement, and gives
    each topic's two scores to the two systems by a fair coin, so the null is exact.
``skewed+ties`` (outside the claims, reported for honesty)
    half the cases tie, the others ``Exp(1) − 1``: skewness +2.8.
``rare-large-win`` (outside the claims: no procedure can hold it)
    with probability 0.05 a case wins +0.95, else loses −0.05 (mean 0): at
    n ≤ 30 most evals hold no win at all and look like a clean regression.

The rule under test is DESIGN §5's: a higher-is-better metric fails when the
1 − α interval lies wholly below 0 (nominal α/2 = 2.5% at α = 0.05), a
lower-is-better one when it lies wholly above; "coverage" is the share of
intervals containing the true difference.  Simulations are vectorised: a batch
of evals is one (trials × n) array and goes through the very functions the gate
calls (:func:`evalkit.stats.procedures.t_bounds`,
:func:`evalkit.stats.power.detectable_regression`).
"""

from __future__ import annotations

import argparse
import csv
import functools
import itertools
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import numpy as np
from numpy.typing import NDArray

from evalkit.stats.correction import holm_rows
from evalkit.stats.diagnostics import NO_WIN_N
from evalkit.stats.power import detectable_regression, mde
from evalkit.stats.procedures import t_bounds, t_p
from evalkit.stats.sign_flips import SignFlipNull, SignFlips

FloatArray = NDArray[np.float64]
Shape = Callable[[int, int, np.random.Generator], FloatArray]

ALPHA: Final = 0.05
#: Trials per cell of the realised-power table at least (SE ±0.9 points at 80%).
POWER_TRIALS: Final = 2000
#: Trials of a cell that resamples (bootstrap, studentized, permutation: 999 resamples a
#: trial, so about 10^3 times the cost of an analytic cell).
RESAMPLING_TRIALS: Final = 2000
#: Above this many cases an analytic cell runs a fifth of the trials: its rates sit near
#: nominal there, and the large-n cells cost the most.
LARGE_N: Final = 100


#: Trials of a paired-t cell in the full run (SE ±0.11 points at 2.5%): about 10 minutes of
#: CPU in all on a shared 2-core machine, which the whole run is kept near.
FULL_TRIALS: Final = 20_000


def analytic_trials(trials: int, n: int) -> int:
    """Trials of a paired-t cell of ``n`` cases (the ``--trials`` figure up to LARGE_N)."""
    return trials if n <= LARGE_N else max(1, trials // 5)


def resampling_trials(trials: int) -> int:
    return max(1, min(trials // 5, RESAMPLING_TRIALS))


SIZES: Final = (10, 15, 20, 30, 50, 100, 300, 1000)


def continuous(trials: int, n: int, rng: np.random.Generator) -> FloatArray:
    difficulty = rng.normal(0.0, 1.0, (trials, n))
    a = 1.0 / (1.0 + np.exp(-(difficulty + rng.normal(0.0, 0.5, (trials, n)))))
    b = 1.0 / (1.0 + np.exp(-(difficulty + rng.normal(0.0, 0.5, (trials, n)))))
    out: FloatArray = a - b
    return out


def binary(trials: int, n: int, rng: np.random.Generator) -> FloatArray:
    p = rng.beta(0.5, 0.5, (trials, n))
    hit_a = rng.random((trials, n)) < p
    hit_b = rng.random((trials, n)) < p
    out: FloatArray = hit_a.astype(np.float64) - hit_b.astype(np.float64)
    return out


def tie_heavy(trials: int, n: int, rng: np.random.Generator) -> FloatArray:
    difficulty = rng.beta(2.0, 2.0, (trials, n))
    a = np.clip(np.round(difficulty + rng.normal(0.0, 0.2, (trials, n)), 1), 0.0, 1.0)
    b = np.clip(np.round(difficulty + rng.normal(0.0, 0.2, (trials, n)), 1), 0.0, 1.0)
    same = rng.random((trials, n)) < 0.7
    out: FloatArray = np.where(same, 0.0, a - b)
    return out


def right_skewed(trials: int, n: int, rng: np.random.Generator) -> FloatArray:
    out: FloatArray = rng.exponential(1.0, (trials, n)) - 1.0
    return out


def left_skewed(trials: int, n: int, rng: np.random.Generator) -> FloatArray:
    out: FloatArray = 1.0 - rng.exponential(1.0, (trials, n))
    return out


def skewed_ties(trials: int, n: int, rng: np.random.Generator) -> FloatArray:
    tie = rng.random((trials, n)) < 0.5
    out: FloatArray = np.where(tie, 0.0, rng.exponential(1.0, (trials, n)) - 1.0)
    return out


def heavy_t2(trials: int, n: int, rng: np.random.Generator) -> FloatArray:
    out: FloatArray = 0.1 * rng.standard_t(2.0, (trials, n))
    return out


def heavy_t3(trials: int, n: int, rng: np.random.Generator) -> FloatArray:
    out: FloatArray = 0.1 * rng.standard_t(3.0, (trials, n))
    return out


_DISCOUNT: Final = 1.0 / np.log2(np.arange(2, 12))


def ndcg_shared(trials: int, n: int, rng: np.random.Generator) -> FloatArray:
    docs = 20
    share = rng.beta(1.0, 3.0, (trials, n, 1))
    u = rng.random((trials, n, docs))
    grades = np.where(u < 0.4 * share, 2.0, np.where(u < share, 1.0, 0.0))
    common = 0.8 * grades + rng.normal(0.0, 1.0, (trials, n, docs))
    gains = 2.0**grades - 1.0
    ideal = np.sort(gains, axis=2)[:, :, ::-1][:, :, :10] @ _DISCOUNT
    scored = []
    for _ in range(2):
        order = np.argsort(-(common + rng.normal(0.0, 0.35, (trials, n, docs))), axis=2)
        dcg = np.take_along_axis(gains, order[:, :, :10], axis=2) @ _DISCOUNT
        scored.append(np.where(ideal > 0, dcg / np.where(ideal > 0, ideal, 1.0), 0.0))
    out: FloatArray = scored[0] - scored[1]
    return out


def bounded_right(trials: int, n: int, rng: np.random.Generator) -> FloatArray:
    out: FloatArray = rng.beta(0.5, 3.0, (trials, n)) - 1.0 / 7.0
    return out


def bounded_left(trials: int, n: int, rng: np.random.Generator) -> FloatArray:
    out: FloatArray = 1.0 / 7.0 - rng.beta(0.5, 3.0, (trials, n))
    return out


def precision_at_5(trials: int, n: int, rng: np.random.Generator) -> FloatArray:
    """P@5 of two systems on a query with relevant-document rate ``p ~ Beta(1, 2)``."""
    p = rng.beta(1.0, 2.0, (trials, n))
    out: FloatArray = (rng.binomial(5, p) - rng.binomial(5, p)) / 5.0
    return out


def bimodal(trials: int, n: int, rng: np.random.Generator) -> FloatArray:
    modes = np.where(rng.random((trials, n)) < 0.5, -0.1, 0.1)
    out: FloatArray = modes + rng.normal(0.0, 0.02, (trials, n))
    return out


def bimodal_70_30(trials: int, n: int, rng: np.random.Generator) -> FloatArray:
    modes = np.where(rng.random((trials, n)) < 0.3, 0.07, -0.03)
    out: FloatArray = modes + rng.normal(0.0, 0.01, (trials, n))
    return out


def rare_large_win(trials: int, n: int, rng: np.random.Generator) -> FloatArray:
    out: FloatArray = np.where(rng.random((trials, n)) < 0.05, 0.95, -0.05)
    return out


#: The real-data table (tests/data/robust03/README.md): in the repository, not the wheel.
TREC_TABLE: Final = Path(__file__).resolve().parents[2] / "tests/data/robust03/per_topic.csv"
TREC_METRICS: Final = ("ndcg@10", "precision@10", "map@1000", "recall@100", "mrr@1000")


@functools.cache
def trec_table() -> dict[str, FloatArray]:
    """{metric: topics × runs} from the committed table; a clear error outside a checkout."""
    if not TREC_TABLE.is_file():
        raise SystemExit(
            f"error: {TREC_TABLE} not found: the real-data null needs a repository checkout "
            "(tests/data/robust03/README.md)"
        )
    rows: dict[str, list[list[float]]] = {}
    with TREC_TABLE.open(encoding="utf-8") as fh:
        reader = csv.reader(fh)
        next(reader)
        for row in reader:
            rows.setdefault(row[0], []).append([float(x) for x in row[2:]])
    return {metric: np.asarray(values) for metric, values in rows.items()}


def _trec_evals(
    metric: str, trials: int, n: int, rng: np.random.Generator, evals: int
) -> list[FloatArray]:
    """``evals`` draws of n topics each from one pair of real runs per trial."""
    table = trec_table()[metric]
    topics, runs = table.shape
    if n > topics:
        raise ValueError(f"trec-{metric}: only {topics} topics")
    first = rng.integers(0, runs, trials)
    second = (first + rng.integers(1, runs, trials)) % runs  # another run, uniformly
    out: list[FloatArray] = []
    for _ in range(evals):
        chosen = np.argsort(rng.random((trials, topics)), axis=1)[:, :n]
        d = table[chosen, first[:, None]] - table[chosen, second[:, None]]
        out.append(np.where(rng.random((trials, n)) < 0.5, d, -d))
    return out


def trec_shape(metric: str) -> Shape:
    """Two real runs, n real topics, each topic's two scores swapped by a fair coin."""

    def draw(trials: int, n: int, rng: np.random.Generator) -> FloatArray:
        return _trec_evals(metric, trials, n, rng, 1)[0]

    draw.__name__ = f"trec_{metric}"
    return draw


def two_evals(
    shape: Shape, trials: int, n: int, rng: np.random.Generator
) -> tuple[FloatArray, FloatArray]:
    """Two independent evals of the same two systems: per trial, one parent, two samples.

    For the synthetic shapes every draw has the same parent.  For the real data a
    parent is a pair of runs: the second eval must compare the same two runs on fresh
    topics (another pair has another spread, and a detectable effect claimed for one
    pair is not a claim about another: that mix realised 72-76% at n = 100, #23).
    """
    metric = TREC_METRIC_OF.get(shape)
    if metric is None:
        return shape(trials, n, rng), shape(trials, n, rng)
    first, second = _trec_evals(metric, trials, n, rng, 2)
    return first, second


TREC_SHAPES: Final[dict[str, Shape]] = {f"trec-{m}": trec_shape(m) for m in TREC_METRICS}
TREC_METRIC_OF: Final[dict[Shape, str]] = {
    shape: name.removeprefix("trec-") for name, shape in TREC_SHAPES.items()
}
#: Largest n a shape can be drawn at (the real data have 100 topics).
MAX_N: Final[dict[str, int]] = dict.fromkeys(TREC_SHAPES, 100)

SHAPES: Final[dict[str, Shape]] = {
    "continuous": continuous,
    "binary": binary,
    "tie-heavy": tie_heavy,
    "right-skewed": right_skewed,
    "left-skewed": left_skewed,
    "heavy-t2": heavy_t2,
    "heavy-t3": heavy_t3,
    "ndcg-shared": ndcg_shared,
    "bounded-right": bounded_right,
    "bounded-left": bounded_left,
    "precision@5": precision_at_5,
    "bimodal": bimodal,
    "bimodal-70/30": bimodal_70_30,
    **TREC_SHAPES,
}
EXTRA_SHAPES: Final[dict[str, Shape]] = {
    "skewed+ties": skewed_ties,
    "rare-large-win": rare_large_win,
}
ALL_SHAPES: Final[dict[str, Shape]] = {**SHAPES, **EXTRA_SHAPES}
#: Strongly skewed training shapes: outside the claims, the default's measured limit
#: (docs/calibration.md, "Strongly skewed differences"; the report warns on such samples).
SKEWED: Final = (
    "right-skewed",
    "left-skewed",
    "bounded-right",
    "bounded-left",
    "bimodal-70/30",
)
#: The shapes the targets are claimed on: the training shapes less the skewed ones.
CLAIMED: Final = tuple(name for name in SHAPES if name not in SKEWED)
#: Procedures the gate can decide with (``t``: the default), plus ``studentized`` (the
#: paired bootstrap-t), a candidate measured against it that no verdict uses.
PROCEDURES: Final = ("t", "bootstrap", "studentized", "permutation")
DEFAULT: Final = "t"


def _counts(n: int, n_resamples: int, gen: np.random.Generator) -> FloatArray:
    """(resamples × n) case counts of ``n_resamples`` bootstrap draws shared by every row."""
    positions = gen.integers(0, n, size=(n_resamples, n), dtype=np.int64)
    counts = np.zeros((n_resamples, n))
    np.add.at(counts, (np.repeat(np.arange(n_resamples), n), positions.ravel()), 1.0)
    return counts


def batch_percentile(
    data: FloatArray, n_resamples: int, gen: np.random.Generator, alpha: float
) -> tuple[FloatArray, FloatArray]:
    """Percentile bootstrap for every row, all rows sharing one set of case draws (each
    row's interval is still exactly the bootstrap of that row)."""
    resampled = data @ _counts(data.shape[1], n_resamples, gen).T / data.shape[1]
    low, high = np.quantile(resampled, [alpha / 2.0, 1.0 - alpha / 2.0], axis=1)
    return low, high


def batch_studentized(
    data: FloatArray, n_resamples: int, gen: np.random.Generator, alpha: float
) -> tuple[FloatArray, FloatArray]:
    """Studentized (bootstrap-t) paired interval for every row, rows sharing the draws.

    Each resample's ``t* = (mean* − mean)/(s*/√n)``; the interval is
    ``[mean − t*(1 − α/2)·s/√n, mean − t*(α/2)·s/√n]``.  A resample without spread has
    t* = ±∞ unless its mean is the sample's, where it is 0.
    """
    n = data.shape[1]
    counts = _counts(n, n_resamples, gen)
    mean = data.mean(axis=1)
    sd = data.std(axis=1, ddof=1)
    centred = data - mean[:, None]
    means = centred @ counts.T / n  # mean* − mean, per row and resample
    squares = (centred * centred) @ counts.T / n
    se = np.sqrt(np.maximum(squares - means * means, 0.0) * n / (n - 1) / n)
    tiny = 1e-12 * np.maximum(sd, 1e-300)[:, None] / math.sqrt(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > tiny, means / np.where(se > tiny, se, 1.0), np.sign(means) * np.inf)
    t = np.where(np.abs(means) <= tiny, np.where(se > tiny, t, 0.0), t)
    t = np.clip(t, -1e300, 1e300)  # finite stand-ins, so a quantile is never ∞ − ∞
    lo_q, hi_q = np.quantile(t, [alpha / 2.0, 1.0 - alpha / 2.0], axis=1)
    se_obs = sd / math.sqrt(n)
    constant = sd == 0.0
    return np.where(constant, mean, mean - hi_q * se_obs), np.where(
        constant, mean, mean - lo_q * se_obs
    )


def seed_for(*parts: str | int) -> np.random.Generator:
    """A generator per cell, from its name: cells do not share or shift each other's draws."""
    words = [int.from_bytes(str(p).encode(), "little") % 2**32 for p in parts]
    return np.random.default_rng(words)


@dataclass(frozen=True)
class Rates:
    """Counts of one cell: trials, intervals wholly below / above the truth."""

    trials: int
    below: int
    above: int

    @property
    def hib(self) -> float:  # false fail of a higher-is-better metric
        return self.below / self.trials

    @property
    def lib(self) -> float:  # false fail of a lower-is-better metric
        return self.above / self.trials

    @property
    def coverage(self) -> float:
        return 1.0 - (self.below + self.above) / self.trials

    def se(self, rate: float) -> float:
        return math.sqrt(max(rate * (1.0 - rate), 1e-12) / self.trials)


@dataclass
class Ledger:
    """The targets a run missed, one line each (the full run exits 1 when any is)."""

    misses: list[str] = field(default_factory=list)
    #: Cells held to no target because this run measured that no test reaches it there.
    excused: list[str] = field(default_factory=list)

    def hold(self, ok: bool, what: str) -> None:
        if not ok:
            self.misses.append(what)

    def excuse(self, what: str) -> None:
        self.excused.append(what)

    def section(self) -> list[str]:
        found = self.misses or ["none: every target above holds in this run"]
        out = ["", "## Targets this run missed", "", *(f"- {m}" for m in found)]
        if self.excused:
            out += [
                "",
                _EXCUSED_HEAD + "because in the same run the exact sign-flip test (the "
                "`permutation` table) is just as far from its level there: with a handful "
                "of untied cases no test can reach 2.5% a side (issue #23's own exception "
                "for discrete data):",
                "",
                *(f"- {m}" for m in self.excused),
            ]
        return out


_EXCUSED_HEAD: Final = "Held to no target, "


def no_test_reaches(exact: Rates) -> bool:
    """Whether the exact sign-flip test's own coverage is above 95 + slack by more than
    2 SE: the data are too discrete for any test to spend its α (few untied cases)."""
    return exact.coverage - 2.0 * exact.se(exact.coverage) > 0.95 + COVERAGE_SLACK


#: Issue #23's one-sided false-fail targets: (smallest n, largest n, limit).
FALSE_FAIL_BANDS: Final = ((30, 10**9, 0.035), (15, 15, 0.04))
#: The real-data null from n = 15: pooled over the five metrics, and in any one cell.
REAL_POOLED_LIMIT: Final = 0.03
REAL_CELL_LIMIT: Final = 0.04
#: Coverage of the 95% interval within this of nominal where the false-fail target holds.
COVERAGE_SLACK: Final = 0.015
#: The realised power of the reported detectable effect: 80 ± 5.
POWER_CLAIM: Final = (0.75, 0.85)
#: How a realised-power miss starts (``--only power`` replaces exactly those lines).
POWER_MISS: Final = "realised power of the reported detectable effect"


def false_fail_limit(n: int) -> float | None:
    """The one-sided false-fail target at n cases (None: no target, below 15)."""
    for smallest, largest, limit in FALSE_FAIL_BANDS:
        if smallest <= n <= largest:
            return limit
    return None


def bounds(
    procedure: str,
    data: FloatArray,
    alpha: float,
    rng: np.random.Generator,
    n_resamples: int,
    truth: float = 0.0,
) -> tuple[FloatArray, FloatArray]:
    """Interval ends per row (for permutation: ±inf / truth encoding of p(truth) ≤ α)."""
    if procedure == "t":
        return t_bounds(data, alpha)
    if procedure == "bootstrap":
        return batch_percentile(data, n_resamples, rng, alpha)
    if procedure == "studentized":
        return batch_studentized(data, n_resamples, rng, alpha)
    # The inverted permutation interval excludes the truth exactly when p(truth) ≤ α
    # (by construction, see SignFlipNull.bounds), so the rates need only p(truth).
    null = SignFlipNull.of(data, SignFlips.draw(data.shape[1], n_resamples, rng))
    p = null.p(np.full(data.shape[0], truth))
    rejected = p <= alpha
    mean = data.mean(axis=1)
    low = np.where(rejected & (mean > truth), np.inf, -np.inf)
    high = np.where(rejected & (mean < truth), -np.inf, np.inf)
    return low, high


def measure(
    procedure: str,
    shape: Shape,
    n: int,
    trials: int,
    rng: np.random.Generator,
    *,
    n_resamples: int = 999,
    shift: float = 0.0,
    chunk: int = 2000,
) -> Rates:
    below = above = 0
    chunk = max(1, min(chunk, 200_000 // n))  # ndcg-shared holds 20 documents per case
    for start in range(0, trials, chunk):
        rows = min(chunk, trials - start)
        data = shape(rows, n, rng) + shift
        low, high = bounds(procedure, data, ALPHA, rng, n_resamples, truth=shift)
        below += int(np.count_nonzero(high < shift))
        above += int(np.count_nonzero(low > shift))
    return Rates(trials, below, above)


def population_sd(shape: Shape) -> float:
    draws = np.concatenate([shape(1000, 100, seed_for("sd", shape.__name__, i)) for i in range(5)])
    return float(np.std(draws))


def realised_power(
    procedure: str, shape: Shape, n: int, trials: int, rng: np.random.Generator, *, own: bool
) -> tuple[float, float]:
    """(claimed effect, share detected) for a regression of the 80%-power MDE.

    ``own=False``: the MDE from the shape's true σ; ``own=True``: each simulated
    eval computes its MDE from its own differences exactly as the gate does (its
    1,000 simulations, seeded per verdict) and a second eval of the same two systems
    (:func:`two_evals`) with that true regression is tested (what a user reading the
    report relies on).
    """
    hits = 0
    claimed: list[float] = []
    sd = population_sd(shape)
    for start in range(0, trials, 2000):
        rows = min(2000, trials - start)
        first, second = two_evals(shape, rows, n, rng)
        if own:
            effect = np.array(
                [
                    detectable_regression(
                        row, ALPHA, higher_is_better=True, method=procedure, seed=start + i
                    )
                    for i, row in enumerate(first)
                ]
            )
        else:
            effect = np.full(rows, mde(sd, n, ALPHA))
        claimed.extend(effect.tolist())
        data = second - effect[:, None]
        _, high = bounds(procedure, data, ALPHA, rng, 999)
        if procedure == "permutation":
            null = SignFlipNull.of(data, SignFlips.draw(n, 999, rng))
            high = np.where((null.p(np.zeros(rows)) <= ALPHA) & (data.mean(axis=1) < 0), -1, 1)
        hits += int(np.count_nonzero(high < 0))
    return float(np.mean(claimed)), hits / trials


def familywise(
    correction: str,
    k: int,
    n: int,
    trials: int,
    rng: np.random.Generator,
    shape: Shape = continuous,
) -> float:
    """Share of gates with k independent metrics of ``shape``, all unchanged, that fail.

    The gate's default procedure (paired t) decides each check; ``none`` fails
    when any interval lies wholly on the bad side, ``holm`` when any Holm-adjusted
    p ≤ α with the estimate on the bad side.
    """
    data = shape(trials * k, n, rng)
    bad = (data.mean(axis=1) < 0).reshape(trials, k)
    if correction == "none":
        _, high = t_bounds(data, ALPHA)
        return float(np.mean(np.any((high < 0).reshape(trials, k), axis=1)))
    p = t_p(data, 0.0).reshape(trials, k)
    adjusted = holm_rows(p)
    return float(np.mean(np.any((adjusted <= ALPHA) & bad, axis=1)))


def latency_p95_rates(
    n: int, trials: int, correlation: float, rng: np.random.Generator, n_resamples: int = 999
) -> tuple[float, float]:
    """(slower, faster) false-fail rates of latency_p95's percentile bootstrap, exact null.

    Both systems' latencies are log-normal (σ = 0.5) with the given correlation of
    the logs; the gate's own resampler and the spec's percentile interval.
    """
    from evalkit.stats.aggregates import NearestRankAggregate
    from evalkit.stats.compare import percentile_interval

    slower = faster = 0
    own = math.sqrt(1.0 - correlation)
    for _ in range(trials):
        shared = math.sqrt(correlation) * rng.normal(size=n)
        a = np.exp(0.5 * (shared + own * rng.normal(size=n)))
        b = np.exp(0.5 * (shared + own * rng.normal(size=n)))
        aggregate = NearestRankAggregate("latency_p95", 95, a, b)
        resampled = aggregate.bootstrap(rng.integers(0, n, size=(n_resamples, n)))
        low, high = percentile_interval(resampled[None, :], ALPHA, axis=1)
        slower += bool(low[0] > 0)
        faster += bool(high[0] < 0)
    return slower / trials, faster / trials


def rare_win(n: int, trials: int, rng: np.random.Generator) -> tuple[float, float, float]:
    """(false fails of paired t, share of them on samples with no win, no_wins firing rate)."""
    data = rare_large_win(trials, n, rng)
    _, high = t_bounds(data, ALPHA)
    failed = high < 0
    no_win = ~np.any(data > 0, axis=1)
    share = float(np.count_nonzero(failed & no_win)) / max(1, int(np.count_nonzero(failed)))
    return float(np.mean(failed)), share, float(np.mean(no_win))


def engine_maxt(k: int, n: int, trials: int, rng: np.random.Generator) -> tuple[float, float]:
    """(max-T, Šidák) two-sided family-wise rates of the engine on k independent metrics."""
    from evalkit.stats.compare import compare_metrics

    maxt = sidak = 0
    level = 1 - (1 - ALPHA) ** (1 / k)
    for trial in range(trials):
        data = rng.normal(size=(n, k))
        result = compare_metrics(
            {f"m{j}": data[:, j] for j in range(k)},
            n_resamples=999,
            seed=trial,
            method="permutation",
            correction="maxt",
        )
        maxt += any(bool(r.significant_adjusted) for r in result.results)
        sidak += any(r.p_value <= level for r in result.results)
    return maxt / trials, sidak / trials


# ----------------------------------------------------------------------------- report


# ----------------------------------------------------------------------------- report


def _pct(rate: float, digits: int = 1) -> str:
    return f"{100 * rate:.{digits}f}"


def _table_head(first: str, sizes: tuple[int, ...]) -> list[str]:
    return [
        f"| {first} | " + " | ".join(f"n = {n}" for n in sizes) + " |",
        "|---|" + "---:|" * len(sizes),
    ]


def _shape_rows(
    sizes: tuple[int, ...],
    cell: Callable[[str, Shape, int], str],
    shapes: dict[str, Shape] = SHAPES,
) -> list[str]:
    """One table row per shape, ``cell(name, shape, n)`` per size it can be drawn at."""
    rows = []
    for name, shape in shapes.items():
        cells = [cell(name, shape, n) if n <= MAX_N.get(name, n) else "—" for n in sizes]
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return rows


def _band_lines(cells: dict[tuple[str, int], float], word: str, ledger: Ledger) -> list[str]:
    """The worst cells against the issue's targets: ≤ 3.5% from n = 30, ≤ 4% at n = 15."""
    for (name, n), rate in cells.items():
        limit = false_fail_limit(n)
        if limit is not None and name in CLAIMED:
            ledger.hold(
                rate <= limit,
                f"{word} at −margin, {name} at n = {n}: {_pct(rate, 2)}% (target ≤ {_pct(limit)}%)",
            )
    lines = []
    for smallest, largest, limit in FALSE_FAIL_BANDS:
        where = f"from n = {smallest}" if largest > smallest else f"at n = {smallest}"
        label = f"{where} (target ≤ {limit * 100:g}%)"
        chosen = {
            key: r
            for key, r in cells.items()
            if smallest <= key[1] <= largest and key[0] in CLAIMED
        }
        if not chosen:
            continue
        worst = max(chosen, key=chosen.__getitem__)
        over = [f"{s} ({_pct(r)}%)" for (s, _), r in chosen.items() if r > limit]
        lines.append(
            f"- worst {word} on a claimed shape {label}: {_pct(chosen[worst])}% ({worst[0]}, "
            f"n = {worst[1]}); "
            f"above the target: {', '.join(over) or 'none'}"
        )
    return lines


def false_fail_table(
    procedures: tuple[str, ...],
    shapes: dict[str, Shape],
    sizes: dict[str, tuple[int, ...]],
    trials: int,
) -> tuple[list[str], dict[tuple[str, str, int], Rates]]:
    cells: dict[tuple[str, str, int], Rates] = {}
    lines = []
    for procedure in procedures:
        cell_sizes = sizes[procedure]
        lines += [f"\n#### `{procedure}`\n", *_table_head("shape", cell_sizes)]
        for name, shape in shapes.items():
            row = []
            for n in cell_sizes:
                if n > MAX_N.get(name, n):
                    row.append("—")
                    continue
                cell_trials = resampling_trials(trials)
                if procedure == DEFAULT:
                    cell_trials = analytic_trials(trials, n)
                rates = measure(procedure, shape, n, cell_trials, seed_for(procedure, name, n))
                cells[procedure, name, n] = rates
                row.append(f"{_pct(rates.hib)} / {_pct(rates.lib)} ({_pct(rates.coverage)})")
            lines.append(f"| {name} | " + " | ".join(row) + " |")
        print(f"  {procedure} done", file=sys.stderr, flush=True)
    return lines, cells


def _worst(cells: dict[tuple[str, str, int], Rates], keep: Callable[[str, int], bool]) -> str:
    chosen = [
        (max(r.hib, r.lib), name, n)
        for (p, name, n), r in cells.items()
        if p == DEFAULT and keep(name, n)
    ]
    if not chosen:
        return "no cell of this run"
    rate, name, n = max(chosen)
    # two decimals: at 100,000 trials a cell they are signal (SE ±0.05 points)
    return f"{_pct(rate, 2)}% ({name}, n = {n})"


def targets(
    cells: dict[tuple[str, str, int], Rates], sizes: tuple[int, ...], ledger: Ledger
) -> list[str]:
    """The issues' targets, read off the default's cells of this run (misses to ``ledger``)."""
    claimed = set(CLAIMED)
    trec = list(TREC_SHAPES)
    for (procedure, name, n), r in cells.items():
        limit = false_fail_limit(n)
        if procedure != DEFAULT or name not in claimed or limit is None:
            continue
        worst = max(r.hib, r.lib)
        ledger.hold(
            worst <= limit,
            f"false fails, {name} at n = {n}: {_pct(worst, 2)}% (target ≤ {_pct(limit)}%)",
        )
        if worst <= limit:  # coverage is held where the false-fail target holds
            what = (
                f"coverage, {name} at n = {n}: {_pct(r.coverage)}% (target 95 ± "
                f"{_pct(COVERAGE_SLACK)})"
            )
            exact = cells.get(("permutation", name, n))
            if r.coverage > 0.95 + COVERAGE_SLACK and exact and no_test_reaches(exact):
                ledger.excuse(f"{what}; the sign-flip test: {_pct(exact.coverage)}%")
            else:
                ledger.hold(abs(r.coverage - 0.95) <= COVERAGE_SLACK, what)
    lines = [
        "",
        "## The targets, read off this run (the default, paired `t`)",
        "",
        "- worst one-sided false fail on a claimed shape, n ≥ 30 (target ≤ 3.5%): "
        + _worst(cells, lambda s, n: s in claimed and n >= 30),
        "- worst at n = 15 (target ≤ 4%): " + _worst(cells, lambda s, n: s in claimed and n == 15),
        "- worst at n = 10 (no target; the `small_n` warning): "
        + _worst(cells, lambda s, n: s in claimed and n == 10),
        "- real data (TREC 2003 Robust, coin-flip null), worst cell from n = 15 (target ≤ 4%): "
        + _worst(cells, lambda s, n: s in trec and n >= 15),
    ]
    pooled = []
    for n in sizes:
        rates = [cells[DEFAULT, name, n] for name in trec if (DEFAULT, name, n) in cells]
        if rates:
            hib = sum(r.below for r in rates) / sum(r.trials for r in rates)
            lib = sum(r.above for r in rates) / sum(r.trials for r in rates)
            pooled.append(f"{_pct(hib)} / {_pct(lib)} at n = {n}")
            if n >= 15:
                ledger.hold(
                    max(hib, lib) <= REAL_POOLED_LIMIT,
                    f"real data pooled at n = {n}: {_pct(max(hib, lib), 2)}% (target ≤ 3%)",
                )
        for name in trec:
            cell = cells.get((DEFAULT, name, n))
            if cell is not None and n >= 15:
                worst = max(cell.hib, cell.lib)
                ledger.hold(
                    worst <= REAL_CELL_LIMIT,
                    f"real data, {name} at n = {n}: {_pct(worst, 2)}% (target ≤ 4%)",
                )
    lines.append("- real data pooled over the five metrics (target ≤ 3%): " + "; ".join(pooled))
    return lines


def power_section(sizes: tuple[int, ...], power_trials: int, ledger: Ledger) -> list[str]:
    """The "reported detectable effect, realised" section (``--only power`` redoes it):
    the training shapes, then the held-out shapes that are not skewed (half the trials)."""
    from heldout_null import SHAPES as HELD_OUT  # a sibling script of this one

    held_out = {
        f"{name} (held-out)": shape
        for name, shape in HELD_OUT.items()
        if name not in HELD_OUT_SKEWED
    }
    held_out_trials = max(1, power_trials // 2)
    out: list[str] = []
    out += [
        "",
        "## Power: the reported detectable effect, realised",
        "",
        "Share of evals with a true regression of the claimed size that the deciding "
        "procedure (paired `t`, the default) fails, in %. First figure: the claim of "
        "`mde()` / `evalkit power`, the formula `(t(1 − α/2, n − 1) + t(0.8, n − 1))·σ_d/√n` "
        "with σ_d the "
        "shape's true spread (a normal-theory figure: it cannot see skew, and on skewed "
        "data it is off in both directions). Second figure: the claim a **verdict** "
        "reports, `detectable_regression` computed by each eval from its own differences, "
        "then tested on a second eval of the same two systems with that true regression "
        "(for the real data: the same pair of runs, other topics). Target 80 ± 5 for the "
        f"second, on the claimed shapes and the held-out shapes that are not skewed "
        f"(`heldout_null.py`; their rows last). {power_trials:,} trials per cell (SE "
        f"±{_pct(math.sqrt(0.16 / power_trials))}), {held_out_trials:,} per held-out cell "
        f"(SE ±{_pct(math.sqrt(0.16 / held_out_trials))}).",
        "",
        *_table_head("shape", sizes),
    ]
    own_cells: dict[tuple[str, int], float] = {}

    def power_cell(name: str, shape: Shape, n: int) -> str:
        cell = held_out_trials if name in held_out else power_trials
        _, known = realised_power(DEFAULT, shape, n, cell, seed_for("pw", name, n), own=False)
        _, own = realised_power(DEFAULT, shape, n, cell, seed_for("po", name, n), own=True)
        own_cells[name, n] = own
        return f"{_pct(known)} / {_pct(own)}"

    out += _shape_rows(sizes, power_cell)
    out += _shape_rows(sizes, power_cell, held_out)
    low_cell = min(own_cells, key=own_cells.__getitem__)
    high_cell = max(own_cells, key=own_cells.__getitem__)
    low_claim, high_claim = POWER_CLAIM
    outside = [
        f"{s} at n = {n}" + (" (skewed)" if s in SKEWED else "")
        for (s, n), r in own_cells.items()
        if not low_claim <= r <= high_claim
    ]
    for (name, n), r in own_cells.items():
        ledger.hold(
            low_claim <= r <= high_claim or name in SKEWED,
            f"{POWER_MISS}, {name} at n = {n}: {_pct(r)}% (claim 80 ± 5)",
        )
    out += [
        "",
        f"- the verdict's claim, realised: {_pct(own_cells[low_cell])}% ({low_cell[0]}, "
        f"n = {low_cell[1]}) to {_pct(own_cells[high_cell])}% ({high_cell[0]}, n = "
        f"{high_cell[1]}); outside 80 ± 5: {', '.join(outside) or 'none'}",
    ]
    print("  power done", file=sys.stderr, flush=True)
    return out


def power_at(shape: Shape, n: int, effect: float, trials: int, rng: np.random.Generator) -> float:
    """Share of evals of ``n`` cases with a true regression ``effect`` that paired t fails."""
    hits = 0
    chunk = max(1, min(2000, 200_000 // n))
    for start in range(0, trials, chunk):
        data = shape(min(chunk, trials - start), n, rng) - effect
        _, high = t_bounds(data, ALPHA)
        hits += int(np.count_nonzero(high < 0))
    return hits / trials


#: Sizes of the "power as cases are added" table (and its property test).
GROWING: Final = (15, 30, 50, 100)
#: The regression, in units of the shape's true σ, whose detection rate the table follows.
GROWING_EFFECT: Final = 0.5


def skewed_section(cells: dict[tuple[str, str, int], Rates], sizes: tuple[int, ...]) -> list[str]:
    """The default's measured limit: the skewed training shapes, read off this run."""
    out = [
        "",
        "## Strongly skewed differences: the default's measured limit",
        "",
        'Paired t has no branch for skewed differences (docs/design/statistics.md, "The '
        'default verdict"). Its one-sided false fails on the skewed training shapes, the '
        "worse side, from the `t` table above (the skewed side of a skewed shape is the one "
        "whose interval end runs short):",
        "",
        *_table_head("shape", sizes),
    ]
    for name in SKEWED:
        row = []
        for n in sizes:
            r = cells.get((DEFAULT, name, n))
            row.append("—" if r is None else f"{_pct(max(r.hib, r.lib))}")
        out.append(f"| {name} | " + " | ".join(row) + " |")
    from30 = [
        max(r.hib, r.lib)
        for (p, name, n), r in cells.items()
        if p == DEFAULT and name in ("right-skewed", "left-skewed") and n >= 30
    ]
    out += [
        "",
        f"- strongly skewed continuous differences (skewness ±2) from n = 30: up to "
        f"{_pct(max(from30))}% one-sided against the 4% the issue asked for; the verdict's "
        "`skewed` warning fires on every sample whose |skewness| exceeds 1.",
    ]
    return out


def heldout_section(trials: int, ledger: Ledger) -> list[str]:
    """Paired t on shapes never used to choose anything (``heldout_null.py``)."""
    from heldout_null import SHAPES as HELD_OUT  # a sibling script of this one

    out = [
        "",
        "## Held-out shapes",
        "",
        "Shapes defined in `scripts/calibration/heldout_null.py` (which describes each) and "
        "never used to choose the default: one-sided false fails hib / lib in % (coverage). "
        "Those marked *skewed* are outside the claims, like the skewed training shapes; the "
        'others are held to the same targets (a miss is listed under "Targets this run '
        f'missed"). {trials:,} trials per cell.',
        "",
        *_table_head("shape", GROWING),
    ]
    worst: dict[bool, float] = {True: 0.0, False: 0.0}
    for name, shape in HELD_OUT.items():
        skewed = name in HELD_OUT_SKEWED
        row = []
        for n in GROWING:
            r = measure(DEFAULT, shape, n, trials, seed_for("heldout", name, n))
            rate = max(r.hib, r.lib)
            worst[skewed] = max(worst[skewed], rate)
            limit = false_fail_limit(n)
            if not skewed and limit is not None:
                ledger.hold(
                    rate <= limit,
                    f"held-out false fails, {name} at n = {n}: {_pct(rate, 2)}% "
                    f"(target ≤ {_pct(limit)}%)",
                )
            row.append(f"{_pct(r.hib)} / {_pct(r.lib)} ({_pct(r.coverage)})")
        label = f"{name} (skewed)" if skewed else name
        out.append(f"| {label} | " + " | ".join(row) + " |")
    out += [
        "",
        f"- worst one-sided false fail, held-out shapes not skewed: {_pct(worst[False])}%; "
        f"skewed: {_pct(worst[True])}%",
    ]
    print("  held-out done", file=sys.stderr, flush=True)
    return out


#: Held-out shapes with a strong skew (outside the claims, as ``SKEWED``).
HELD_OUT_SKEWED: Final = (
    "lognormal",
    "skew-mix",
    "chi2(1)",
    "zi-gamma",
    "zi-lognormal",
    "ties+wins",
    "rounded-skew",
    "lognormal-0.5",
    "weibull-0.5",
    "lomax-4",
)


def growing_section(trials: int, ledger: Ledger) -> list[str]:
    """Power at a fixed regression as cases are added: it must never fall (#43)."""
    out = [
        "",
        "## Power as cases are added",
        "",
        f"Share of evals (in %) in which the default fails a true regression of "
        f"{GROWING_EFFECT:g}·σ (σ the shape's true spread), at n = "
        f"{', '.join(map(str, GROWING))}. It must not fall as cases are added on any shape "
        f"(tests/stats/test_power_grows.py holds it). {trials:,} trials per cell.",
        "",
        *_table_head("shape", GROWING),
    ]
    for name, shape in SHAPES.items():
        effect = GROWING_EFFECT * population_sd(shape)
        rates = [
            power_at(shape, n, effect, trials, seed_for("grow", name, n))
            if n <= MAX_N.get(name, n)
            else None
            for n in GROWING
        ]
        shown = [r for r in rates if r is not None]
        ledger.hold(
            all(b >= a for a, b in itertools.pairwise(shown)),
            f"power falls as cases are added, {name}: " + " → ".join(_pct(r) for r in shown),
        )
        out.append(f"| {name} | " + " | ".join("—" if r is None else _pct(r) for r in rates) + " |")
    print("  growing done", file=sys.stderr, flush=True)
    return out


def render(trials: int, sizes: tuple[int, ...]) -> tuple[str, Ledger]:
    """The whole of docs/calibration.md, and the targets this run missed."""
    started = time.process_time()
    ledger = Ledger()
    resampling = resampling_trials(trials)
    few = tuple(n for n in sizes if n in (15, 30, 100, 300)) or sizes
    out = [
        "# Calibration: what the gate's verdicts are worth, measured",
        "",
        "Generated by `uv run python scripts/calibration/calibrate.py` (a checkout script, "
        "not in the wheel; it defines every shape below precisely). Do not edit by hand. A "
        "reduced, fixed-seed version of the targets runs in the slow tier (`uv run pytest "
        "-m slow tests/stats/test_calibration.py`).",
        "",
        "The default verdict (`method: auto`, `evalkit.paired_test`, `evalkit compare`) is "
        "plain paired t on the per-case differences; it fits no constant to any shape. "
        "**Training shapes** (below) are those the default and its targets were chosen on; "
        "**held-out shapes** (their own section) never were; the **real data** are per-topic "
        "values of TREC 2003 Robust runs under an exact coin-flip null. The targets are "
        "claimed on the training shapes that are not strongly skewed, on the held-out shapes "
        "that are not, and on the real data; the skewed ones are the default's measured "
        'limit (section "Strongly skewed differences").',
        "",
        (__doc__ or "")
        .split("per-case differences\nd = a − b")[1]
        .split("The rule under test")[0]
        .replace(
            "(mean exactly 0 before any shift):",
            "Training shapes of the per-case differences d = a − b (mean exactly 0 before any "
            "shift):",
        ),
        "## False fails and coverage at α = 0.05",
        "",
        "Each cell: one-sided false-fail rate of a **higher-is-better** metric (interval wholly "
        "below 0) / of a **lower-is-better** metric (wholly above 0), in %, nominal 2.5 each; "
        "in brackets the coverage of the 95% interval (nominal 95.0; two-sided false-alarm rate "
        "= 100 − coverage). Truth: no change. `—`: the real data have 100 topics.",
        f"Trials per cell: {trials:,} for `t` up to n = {LARGE_N} (Monte Carlo SE ±"
        f"{_pct(math.sqrt(0.025 * 0.975 / trials), 2)} points at 2.5%), "
        f"{analytic_trials(trials, LARGE_N + 1):,} above; "
        f"{resampling:,} for `bootstrap` (the spec's percentile interval), `studentized` (the "
        "paired bootstrap-t, a candidate no verdict uses) and `permutation` (999 resamples "
        f"each; SE ±{_pct(math.sqrt(0.025 * 0.975 / resampling))}), measured at n = "
        f"{', '.join(map(str, few))} only.",
    ]
    table_sizes = {p: (sizes if p == DEFAULT else few) for p in PROCEDURES}
    lines, cells = false_fail_table(PROCEDURES, ALL_SHAPES, table_sizes, trials)
    out += lines
    out += targets(cells, sizes, ledger)
    out += skewed_section(cells, sizes)
    out += heldout_section(max(1, trials // 4), ledger)
    out += [
        "",
        "## Non-inferiority at a true difference of exactly −margin",
        "",
        "Share of evals that pass `non_inferiority` although the candidate is worse by "
        "exactly the margin (must be ≤ α/2 = 2.5%). Procedure `t`; the shape is shifted "
        f"by −margin (margin 0.1). {trials:,} trials per cell up to n = {LARGE_N}, "
        f"{analytic_trials(trials, LARGE_N + 1):,} above. Paired t is shift-invariant, so "
        "this is the lower-is-better false-fail rate of the table above on other draws, and "
        "the general targets apply on the claimed shapes: at most 3.5% from n = 30, at most "
        "4% at n = 15.",
        "",
        *_table_head("shape", few),
    ]
    ni_cells: dict[tuple[str, int], float] = {}

    def ni_cell(name: str, shape: Shape, n: int) -> str:
        cell = analytic_trials(trials, n)
        r = measure(DEFAULT, shape, n, cell, seed_for("ni", name, n), shift=-0.1)
        ni_cells[name, n] = r.lib
        return f"{_pct(r.lib)} ± {_pct(r.se(r.lib))}"

    out += _shape_rows(few, ni_cell)
    out += ["", *_band_lines(ni_cells, "pass", ledger)]
    print("  non-inferiority done", file=sys.stderr, flush=True)
    power_trials = max(POWER_TRIALS, resampling_trials(trials))
    out += power_section(GROWING, power_trials, ledger)
    out += growing_section(max(1, trials // 4), ledger)
    agg_trials = max(500, resampling_trials(trials))
    out += [
        "",
        "## Small-n aggregates: latency_p95",
        "",
        "One-sided false fails (%) of latency_p95's percentile bootstrap (the gate's own "
        "nearest-rank resampler, 999 resamples) with both systems' latencies log-normal "
        "(σ = 0.5) and the logs correlated 0 / 0.7, nothing changed: slower / faster. Below "
        "20 cases p95 is each run's maximum, which no resampling bounds; the gate refuses "
        f"such a check (status `error`, naming the cases needed). {agg_trials:,} trials per "
        "cell.",
        "",
        "| n | ρ = 0 | ρ = 0.7 |",
        "|---:|---:|---:|",
    ]
    for n in (10, 15, 19, 20, 30, 50, 80):
        cellz = [
            latency_p95_rates(n, agg_trials, rho, seed_for("p95", n, str(rho)))
            for rho in (0.0, 0.7)
        ]
        out.append(f"| {n} | " + " | ".join(f"{_pct(a)} / {_pct(b)}" for a, b in cellz) + " |")
    print("  aggregates done", file=sys.stderr, flush=True)
    out += [
        "",
        "## A rare large win (outside the claims)",
        "",
        "Shape `rare-large-win` (a +0.95 win on 1 case in 20, a −0.05 loss on the rest; "
        "mean 0): false fails of `t` of a higher-is-better metric, the share of those "
        "false fails on samples holding no win at all, and how often the `no_wins` warning "
        f"fires (gate verdicts below 60 cases). {trials:,} trials per cell up to n = "
        f"{LARGE_N}.",
        "",
        "| n | false fails | of them with no win | `no_wins` fires |",
        "|---:|---:|---:|---:|",
    ]
    for n in (10, 15, 20, 30, 50, 100):
        failed, share, fires = rare_win(n, analytic_trials(trials, n), seed_for("rw", n))
        shown = _pct(fires) if n < NO_WIN_N else "— (n ≥ 60)"
        out.append(f"| {n} | {_pct(failed)} | {_pct(share)} | {shown} |")
    fw_trials = max(2000, resampling_trials(trials))
    out += [
        "",
        "## Family-wise false fails (k independent continuous metrics, nothing changed)",
        "",
        "Share of gates in which at least one `no_significant_regression` check of a "
        "higher-is-better metric fails, procedure `t`. Without a correction the expected "
        "rate is 1 − (1 − α/2)^k (one-sided, independent); Holm controls the two-sided "
        "family-wise rate at α, so the one-sided rate is about α/2 = 2.5% (a step-down "
        "rejection on the good side can relax the bad side's threshold, which adds a little). "
        f"{fw_trials:,} gates per cell (SE ±{_pct(math.sqrt(0.1 * 0.9 / fw_trials))} at "
        "10%).",
        "",
        "| k | n | none (expected) | holm |",
        "|---:|---:|---:|---:|",
    ]
    for k in (5, 10):
        for n in (30, 100):
            none = familywise("none", k, n, fw_trials, seed_for("fw", k, n))
            corrected = familywise("holm", k, n, fw_trials, seed_for("fwh", k, n))
            expected = 1 - (1 - ALPHA / 2) ** k
            out.append(f"| {k} | {n} | {_pct(none)} ({_pct(expected)}) | {_pct(corrected)} |")
    out += [
        "",
        "The same with heavy-tailed metrics (the header's figure is computed for normal "
        "differences: for such a gate it prints about the continuous rows' rate):",
        "",
        "| shape | k | n | none (expected) | holm |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in ("heavy-t2", "heavy-t3"):
        shape = SHAPES[name]
        none = familywise("none", 5, 30, fw_trials, seed_for("fw", name, 5, 30), shape)
        corrected = familywise("holm", 5, 30, fw_trials, seed_for("fwh", name, 5, 30), shape)
        expected = 1 - (1 - ALPHA / 2) ** 5
        out.append(f"| {name} | 5 | 30 | {_pct(none)} ({_pct(expected)}) | {_pct(corrected)} |")
    maxt_trials = max(500, min(2000, resampling))
    out += [
        "",
        '### Engine max-T (`paired_bootstrap_many(..., correction="maxt")`)',
        "",
        'Two-sided family-wise rate of `significant_adjusted` with `method="permutation"`, '
        "k independent normal metrics, n = 30, 999 sign flips, nothing changed; beside it "
        "the same tests with a Šidák correction. Each metric's max-T scale is sqrt(Σ d²) "
        "(no sign flip changes it); with the bootstrap SE as the scale the same cells "
        f"measured 8.7% / 9.4%. {maxt_trials:,} trials per cell.",
        "",
        "| k | max-T | Šidák |",
        "|---:|---:|---:|",
    ]
    for k in (5, 10):
        maxt, sidak = engine_maxt(k, 30, maxt_trials, seed_for("maxt", k))
        out.append(f"| {k} | {_pct(maxt)} | {_pct(sidak)} |")
    out += ledger.section()
    out += ["", READING, "", f"_Generated in {time.process_time() - started:.0f} s of CPU._", ""]
    return "\n".join(out), ledger


READING: Final = """## Reading it

- **The default** (`method: auto`, `evalkit.paired_test`, `evalkit compare`) is plain
  paired t on the per-case differences: the interval mean ± t(1 − α/2, n − 1)·s/√n and
  its dual two-sided p; a `no_significant_regression` check fails when the interval lies
  wholly on the bad side (one-sided at α/2). No branch, no tuned constant
  (docs/design/statistics.md, "The default verdict").
- **Where it holds.** Symmetric, tied, discrete, heavy-tailed and ranking-derived
  differences, the real TREC data and the held-out shapes that are not strongly skewed:
  the targets section reads the worst cells off this run.
- **Where it does not: strongly skewed differences.** Paired t's interval is symmetric
  and the mean of a skewed sample is not, so the end on the skew's far side runs short:
  the section "Strongly skewed differences" gives the measured rates. Every verdict on a
  sample with |skewness| > 1 carries the `skewed` warning with that limit. The rule paired
  t replaced (issue #23: 21 tuned constants) held those cells nearer 3% but lost power
  as cases were added and on the real data; a BCa or studentized branch above a skewness
  line would add a resampled decision and constants for cells the claims do not cover.
- **Below 30 cases** verdicts carry a `small_n` warning.
- **`bootstrap` and `permutation`** (opt-in per check): the percentile bootstrap
  over-rejects at small n on every shape; the sign-flip test is exact on the symmetric
  shapes (mid-p: slightly above 2.5%) and wrong on skewed ones. The studentized paired
  bootstrap (bootstrap-t) over-rejects on tied, binary and heavy-tailed differences (its
  table): the verdict's details show the spec's percentile bootstrap interval beside the
  deciding one, with one line saying why it did not decide.
- **Power.** The figure a verdict reports ("detects ≥", `detectable_regression`) is the
  quantile of paired t's bad interval end over the eval's own centred differences
  resampled, at a level allowing for the uncertainty of its own spread (the
  delta-method variance of s from the sample kurtosis; no fitted weight); the range it is
  realised at is read off the table above. Where the tail is so heavy that the variance
  is infinite or rests on a few cases (heavy-t2 and the held-out t(1.5) at any n, the
  held-out contaminated shape below 50 cases) the claim can be realised below 75%: a
  sample cannot show how uncertain its own spread is, and the principled alternatives
  measured (a jackknife or bootstrap estimate of that uncertainty, a double bootstrap,
  Student's level) did not close it (docs/design/statistics.md, "Power"). Power at a
  fixed regression never falls as cases are added (section "Power as cases are added").
- **Aggregates.** latency_p95 below 20 cases is each run's maximum, and its bootstrap
  fails falsely far above nominal: the gate refuses such a check.
- **A rare large win** (outside the claims): a change that wins big on a few cases and
  loses a little on the rest fails falsely under every procedure at small n, and every
  such false fail below 60 cases is on a sample with no win at all: the `no_wins`
  warning fires on exactly those samples.
- **Family-wise**: the header's rate is computed for the decision made (one-sided,
  correlated, corrected; `stats/familywise.py`). It models normal differences.
- **Per-slice checks** are measured by `tests/stats/test_slice_fdr_simulation.py` and
  published in [slices.md](slices.md#measured), beside what they describe."""


def _redo_power(path: Path) -> int:
    """Replace the realised-power section of ``path`` by a fresh measurement."""
    text = path.read_text(encoding="utf-8")
    head, sep, rest = text.partition("\n## Power: the reported detectable effect, realised\n")
    _, sep2, tail = rest.partition("\n## Small-n aggregates")
    if not sep or not sep2:
        raise SystemExit(f"error: {path} has no realised-power section to replace")
    started = time.time()
    ledger = Ledger()
    section = "\n".join(power_section(GROWING, POWER_TRIALS, ledger))
    note = (
        f"\n\n_This section regenerated alone (`--only power`) in {time.time() - started:.0f} s; "
        "the rest of the file by the full run._\n"
    )
    text = with_power_misses(head + section + note + sep2 + tail, ledger.misses)
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path} (realised power only)", file=sys.stderr)
    return _verdict(ledger, asserted=True)


def with_power_misses(text: str, power_misses: list[str]) -> str:
    """``text`` with its "Targets this run missed" list holding these realised-power
    misses in place of the old ones (the other targets' lines, from the full run, stay,
    and so does the list of cells held to no target)."""
    heading = "\n## Targets this run missed\n"
    head, sep, rest = text.partition(heading)
    if not sep:
        raise SystemExit("error: the file has no 'Targets this run missed' section")
    body, next_heading, tail = rest.partition("\n## ")
    listed, excused_head, excused = body.partition(f"\n\n{_EXCUSED_HEAD}")
    kept = [
        line[2:]
        for line in listed.splitlines()
        if line.startswith("- ")
        and not line.startswith(f"- {POWER_MISS}")
        and not line.startswith("- none:")
    ]
    section = Ledger([*kept, *power_misses]).section()[2:]  # without the heading's lines
    lines = "\n".join(section)
    if excused_head:
        lines += excused_head + excused.rstrip("\n")
    return head + heading + lines + "\n" + next_heading + tail


def _verdict(ledger: Ledger, *, asserted: bool) -> int:
    """Print the missed targets; 1 when a full run missed any (a smoke run only prints)."""
    for miss in ledger.misses:
        print(f"target missed: {miss}", file=sys.stderr)
    if not ledger.misses:
        print("every target holds in this run", file=sys.stderr)
        return 0
    if not asserted:
        print(f"{len(ledger.misses)} missed (a smoke run: not asserted)", file=sys.stderr)
        return 0
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/calibration/calibrate.py")
    parser.add_argument("--quick", action="store_true", help="1,000 trials; print, do not write")
    parser.add_argument("--out", default="docs/calibration.md")
    parser.add_argument("--trials", type=int, help="trials per cell (a smoke run); print only")
    parser.add_argument(
        "--only",
        choices=["power"],
        help="redo one section in place in --out (the rest of the file is kept as it is)",
    )
    args = parser.parse_args(argv)
    if args.only == "power":
        return _redo_power(Path(args.out))
    trials = args.trials or (1000 if args.quick else FULL_TRIALS)
    args.quick = args.quick or args.trials is not None
    text, ledger = render(trials, SIZES)
    if args.quick:
        print(text)
    else:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    return _verdict(ledger, asserted=not args.quick)


if __name__ == "__main__":
    raise SystemExit(main())
