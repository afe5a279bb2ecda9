"""Measure how the gate's procedures behave when the truth is known; write docs/calibration.md.

    uv run python -m evalkit.stats.calibrate            # regenerates docs/calibration.md
    uv run python -m evalkit.stats.calibrate --quick    # fewer trials, prints only

The full run asserts issue #23's targets: it writes the file, lists every cell that
misses one (also in the file, under "Targets this run missed") and exits 1 if any
does, so a change that moves a figure past its target cannot be published as if it
held.  ``--only power`` does the same for the realised-power claim alone.

Every figure is a Monte Carlo rate over simulated evals whose true mean
difference is set by construction, with its standard error.  The shapes of the
per-case differences d = a − b (mean exactly 0 before any shift):

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
``right-skewed``
    ``Exp(1) − 1``: skewness +2, many small losses and a few big wins.
``left-skewed``
    ``1 − Exp(1)``: skewness −2.
``heavy-t2`` / ``heavy-t3``
    Student t with 2 / 3 degrees of freedom (× 0.1): symmetric, heavy tails (t2 has
    no finite variance); a few extreme cases make the sample skewness large.
``ndcg-shared``
    nDCG@10 of two rankers over 20 documents per query (grades 0/1/2, a query's
    share of relevant documents ``~ Beta(1, 3)``) that share most of their score
    noise: score = 0.8·grade + N(0, 1) shared + N(0, 0.35²) each; symmetric by
    exchangeability, about 22% of cases tie (the same top 10), kurtosis about 7.
``bounded-right`` / ``bounded-left``
    ``±(Beta(½, 3) − 1/7)``: bounded, skewness ±1.6.
``precision@5``
    discrete: each system's P@5 ``Binomial(5, p)/5`` with ``p ~ Beta(1, 2)`` shared by
    the case, so differences move in steps of 0.2 (about 30% tie).
``bimodal`` / ``bimodal-70/30``
    two groups of cases: ±0.1 equally likely with ``N(0, 0.02²)`` around each
    (symmetric); 70% near −0.03 and 30% near +0.07 with ``N(0, 0.01²)`` around each
    (skewness about 0.8 from the groups' sizes, not from a tail).
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
calls (:mod:`evalkit.stats.procedures`).
"""

from __future__ import annotations

import argparse
import csv
import functools
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
from evalkit.stats.procedures import (
    Moments,
    PermutationNull,
    SignFlips,
    auto_p,
    auto_skewness,
    batch_bounds,
    batch_percentile,
    batch_studentized,
)

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


def analytic_trials(trials: int, n: int) -> int:
    """Trials of an analytic cell (t, skew-t, auto) of ``n`` cases.

    100,000 by default (SE ±0.05 points at 2.5%): the targets sit half a point above
    nominal, and at 10,000 trials (SE ±0.16) a cell at the target reads as a miss or a
    pass by chance (left- and right-skewed at n = 15 are mirror images, and read 4.2%
    and 3.9% at 10,000 trials; 3.90% and 3.98% at 100,000).
    """
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
TREC_TABLE: Final = Path(__file__).resolve().parents[3] / "tests/data/robust03/per_topic.csv"
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
#: Procedures the gate can decide with, plus the candidates the default was chosen from
#: (``skew-t`` everywhere; ``studentized``, the paired bootstrap-t, #23).
PROCEDURES: Final = ("auto", "t", "skew-t", "bootstrap", "studentized", "permutation")


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
#: Power at t's MDE at most this far below plain t's where t holds its level.
POWER_LOSS: Final = 0.03
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
    if procedure in ("auto", "t", "skew-t"):
        return batch_bounds(procedure, data, alpha)  # type: ignore[arg-type]
    if procedure == "bootstrap":
        low, high, _ = batch_percentile(data, n_resamples, rng, alpha)
        return low, high
    if procedure == "studentized":
        return batch_studentized(data, n_resamples, rng, alpha)
    # The inverted permutation interval excludes the truth exactly when p(truth) ≤ α
    # (by construction, see PermutationNull.bounds), so the rates need only p(truth).
    null = PermutationNull.of(data, SignFlips.draw(data.shape[1], n_resamples, rng))
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
            null = PermutationNull.of(data, SignFlips.draw(n, 999, rng))
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

    The gate's default procedure (``auto``) decides each check; ``none`` fails
    when any interval lies wholly on the bad side, ``holm`` when any Holm-adjusted
    p ≤ α with the estimate on the bad side.
    """
    data = shape(trials * k, n, rng)
    m = Moments.of(data)
    bad = (m.mean < 0).reshape(trials, k)
    if correction == "none":
        _, high = batch_bounds("auto", data, ALPHA)
        return float(np.mean(np.any((high < 0).reshape(trials, k), axis=1)))
    p = auto_p(m, 0.0).reshape(trials, k)  # auto's own p
    adjusted = holm_rows(p)
    return float(np.mean(np.any((adjusted <= ALPHA) & bad, axis=1)))


def far_tail(
    shape: Shape, n: int, trials: int, rng: np.random.Generator, alpha: float
) -> tuple[float, float, float]:
    """One-sided false fails at level ``alpha`` (a Holm step's): ``auto``, ``t``, and the
    share of ``auto``'s that fell on samples where it corrected for skewness."""
    data = shape(trials, n, rng)
    _, auto_high = batch_bounds("auto", data, alpha)
    _, t_high = batch_bounds("t", data, alpha)
    failed = auto_high < 0
    corrected = auto_skewness(Moments.of(data)) != 0.0
    share = float(np.count_nonzero(failed & corrected)) / max(1, int(np.count_nonzero(failed)))
    return float(np.mean(failed)), float(np.mean(t_high < 0)), share


def power_against_t(
    shape: Shape, n: int, trials: int, rng: np.random.Generator
) -> dict[str, float]:
    """Share of evals detecting a true regression of t's 80%-power MDE, per procedure.

    The MDE from the shape's true σ; the same evals for ``t`` and ``auto``, so the
    difference is the power ``auto``'s skewness decision costs (or buys).
    """
    effect = mde(population_sd(shape), n, ALPHA)
    hits = dict.fromkeys(("t", "auto"), 0)
    chunk = max(1, min(2000, 200_000 // n))
    for start in range(0, trials, chunk):
        data = shape(min(chunk, trials - start), n, rng) - effect
        for procedure in hits:
            _, high = batch_bounds(procedure, data, ALPHA)  # type: ignore[arg-type]
            hits[procedure] += int(np.count_nonzero(high < 0))
    return {procedure: count / trials for procedure, count in hits.items()}


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
    """(false fails of ``auto``, share of them on samples with no win, no_wins firing rate)."""
    data = rare_large_win(trials, n, rng)
    _, high = batch_bounds("auto", data, ALPHA)
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


def _shape_rows(sizes: tuple[int, ...], cell: Callable[[str, Shape, int], str]) -> list[str]:
    """One table row per claimed shape, ``cell(name, shape, n)`` per size it can be drawn at."""
    rows = []
    for name, shape in SHAPES.items():
        cells = [cell(name, shape, n) if n <= MAX_N.get(name, n) else "—" for n in sizes]
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return rows


def _band_lines(cells: dict[tuple[str, int], float], word: str, ledger: Ledger) -> list[str]:
    """The worst cells against the issue's targets: ≤ 3.5% from n = 30, ≤ 4% at n = 15."""
    for (name, n), rate in cells.items():
        limit = false_fail_limit(n)
        if limit is not None:
            ledger.hold(
                rate <= limit,
                f"{word} at −margin, {name} at n = {n}: {_pct(rate, 2)}% (target ≤ {_pct(limit)}%)",
            )
    lines = []
    for smallest, largest, limit in FALSE_FAIL_BANDS:
        where = f"from n = {smallest}" if largest > smallest else f"at n = {smallest}"
        label = f"{where} (target ≤ {limit * 100:g}%)"
        chosen = {key: r for key, r in cells.items() if smallest <= key[1] <= largest}
        if not chosen:
            continue
        worst = max(chosen, key=chosen.__getitem__)
        over = [f"{s} ({_pct(r)}%)" for (s, _), r in chosen.items() if r > limit]
        lines.append(
            f"- worst {word} {label}: {_pct(chosen[worst])}% ({worst[0]}, n = {worst[1]}); "
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
                cell_trials = (
                    analytic_trials(trials, n)
                    if procedure in ("auto", "t", "skew-t")
                    else resampling_trials(trials)
                )
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
        if p == "auto" and keep(name, n)
    ]
    if not chosen:
        return "no cell of this run"
    rate, name, n = max(chosen)
    # two decimals: at 100,000 trials a cell they are signal (SE ±0.05 points)
    return f"{_pct(rate, 2)}% ({name}, n = {n})"


def targets(
    cells: dict[tuple[str, str, int], Rates], sizes: tuple[int, ...], ledger: Ledger
) -> list[str]:
    """The issue's targets, read off the `auto` cells of this run (misses to ``ledger``)."""
    claimed = set(SHAPES)
    trec = list(TREC_SHAPES)
    for (procedure, name, n), r in cells.items():
        limit = false_fail_limit(n)
        if procedure != "auto" or name not in claimed or limit is None:
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
        "## The targets, read off this run (`auto`)",
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
        rates = [cells["auto", name, n] for name in trec if ("auto", name, n) in cells]
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
            cell = cells.get(("auto", name, n))
            if cell is not None and n >= 15:
                worst = max(cell.hib, cell.lib)
                ledger.hold(
                    worst <= REAL_CELL_LIMIT,
                    f"real data, {name} at n = {n}: {_pct(worst, 2)}% (target ≤ 4%)",
                )
    lines.append("- real data pooled over the five metrics (target ≤ 3%): " + "; ".join(pooled))
    return lines


def power_section(few: tuple[int, ...], power_trials: int, ledger: Ledger) -> list[str]:
    """The "reported detectable effect, realised" section (``--only power`` redoes it)."""
    out: list[str] = []
    out += [
        "",
        "## Power: the reported detectable effect, realised",
        "",
        "Share of evals with a true regression of the claimed size that the deciding "
        "procedure (`auto`) fails, in %. First figure: the claim of `mde()` / `evalkit "
        "power`, the formula `(t(1 − α/2, n − 1) + t(0.8, n − 1))·σ_d/√n` with σ_d the "
        "shape's true spread (a normal-theory figure: it cannot see skew, and on skewed "
        "data it is off in both directions). Second figure: the claim a **verdict** "
        "reports, `detectable_regression` computed by each eval from its own differences, "
        "then tested on a second eval of the same two systems with that true regression "
        "(for the real data: the same pair of runs, other topics). Target 80 ± 5 for the "
        f"second. {power_trials:,} trials per cell (SE "
        f"±{_pct(math.sqrt(0.16 / power_trials))}).",
        "",
        *_table_head("shape", few),
    ]
    own_cells: dict[tuple[str, int], float] = {}

    def power_cell(name: str, shape: Shape, n: int) -> str:
        cell = power_trials
        _, known = realised_power("auto", shape, n, cell, seed_for("pw", name, n), own=False)
        _, own = realised_power("auto", shape, n, cell, seed_for("po", name, n), own=True)
        own_cells[name, n] = own
        return f"{_pct(known)} / {_pct(own)}"

    out += _shape_rows(few, power_cell)
    low_cell = min(own_cells, key=own_cells.__getitem__)
    high_cell = max(own_cells, key=own_cells.__getitem__)
    low_claim, high_claim = POWER_CLAIM
    outside = [
        f"{s} at n = {n}" for (s, n), r in own_cells.items() if not low_claim <= r <= high_claim
    ]
    for (name, n), r in own_cells.items():
        ledger.hold(
            low_claim <= r <= high_claim,
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


def render(trials: int, sizes: tuple[int, ...]) -> tuple[str, Ledger]:
    """The whole of docs/calibration.md, and the targets this run missed."""
    started = time.time()
    ledger = Ledger()
    resampling = resampling_trials(trials)
    few = tuple(n for n in sizes if n in (15, 30, 100, 300)) or sizes
    out = [
        "# Calibration: what the gate's verdicts are worth, measured",
        "",
        "Generated by `uv run python -m evalkit.stats.calibrate` (source: "
        "`src/evalkit/stats/calibrate.py`, which defines every shape below precisely). "
        "Do not edit by hand. A reduced, fixed-seed version of the targets runs in the "
        "slow tier (`uv run pytest -m slow tests/statistics/test_calibration.py`).",
        "",
        (__doc__ or "")
        .split("per-case differences d = a − b")[1]
        .split("The rule under test")[0]
        .replace(
            "(mean exactly 0 before any shift):",
            "Shapes of the per-case differences d = a − b (mean exactly 0 before any shift):",
        ),
        "## False fails and coverage at α = 0.05",
        "",
        "Each cell: one-sided false-fail rate of a **higher-is-better** metric (interval wholly "
        "below 0) / of a **lower-is-better** metric (wholly above 0), in %, nominal 2.5 each; "
        "in brackets the coverage of the 95% interval (nominal 95.0; two-sided false-alarm rate "
        "= 100 − coverage). Truth: no change. `—`: the real data have 100 topics.",
        f"Trials per cell: {trials:,} for `auto` and `t` up to n = {LARGE_N} (Monte Carlo SE ±"
        f"{_pct(math.sqrt(0.025 * 0.975 / trials), 2)} points at 2.5%), "
        f"{analytic_trials(trials, LARGE_N + 1):,} above, also for `skew-t`; "
        f"{resampling:,} for `bootstrap`, `studentized` (the paired bootstrap-t, a "
        "candidate no verdict uses) and `permutation` (999 resamples each; SE ±"
        f"{_pct(math.sqrt(0.025 * 0.975 / resampling))}). All but `auto` and `t` are "
        f"measured at n = {', '.join(map(str, few))} only.",
    ]
    table_sizes = {p: (sizes if p in ("auto", "t") else few) for p in PROCEDURES}
    lines, cells = false_fail_table(PROCEDURES, ALL_SHAPES, table_sizes, trials)
    out += lines
    out += targets(cells, sizes, ledger)
    out += [
        "",
        "## Power against plain t where t holds",
        "",
        "Share of evals (in %) that catch a true regression of t's 80%-power MDE "
        "(`mde()` with the shape's true σ): `t` / `auto`, on the shapes where plain t holds "
        f"its level. Target: `auto` at most 3 points below `t`. {trials:,} trials per cell "
        f"up to n = {LARGE_N}, {analytic_trials(trials, LARGE_N + 1):,} above "
        f"(SE ±{_pct(math.sqrt(0.16 / trials), 2)} / "
        f"±{_pct(math.sqrt(0.16 / analytic_trials(trials, LARGE_N + 1)), 2)}).",
        "",
        *_table_head("shape", few),
    ]
    symmetric = (
        "continuous",
        "binary",
        "tie-heavy",
        "heavy-t2",
        "heavy-t3",
        "ndcg-shared",
        "precision@5",
        "bimodal",
        "trec-ndcg@10",
        "trec-map@1000",
    )
    for name in symmetric:
        row = []
        for n in few:
            if n > MAX_N.get(name, n):
                row.append("—")
                continue
            got = power_against_t(
                SHAPES[name], n, analytic_trials(trials, n), seed_for("pt", name, n)
            )
            row.append(f"{_pct(got['t'])} / {_pct(got['auto'])}")
            ledger.hold(
                got["auto"] >= got["t"] - POWER_LOSS,
                f"power against t, {name} at n = {n}: {_pct(got['auto'])}% against t's "
                f"{_pct(got['t'])}% (target at most 3 points below)",
            )
        out.append(f"| {name} | " + " | ".join(row) + " |")
    print("  power against t done", file=sys.stderr, flush=True)
    out += [
        "",
        "## Non-inferiority at a true difference of exactly −margin",
        "",
        "Share of evals that pass `non_inferiority` although the candidate is worse by "
        "exactly the margin (must be ≤ α/2 = 2.5%). Procedure `auto`; the shape is shifted "
        f"by −margin (margin 0.1). {trials:,} trials per cell up to n = {LARGE_N}, "
        f"{analytic_trials(trials, LARGE_N + 1):,} above. The procedures are "
        "shift-invariant, so this is the lower-is-better false-fail rate of the table above "
        "on other draws, and the issue's general targets apply too: at most 3.5% from "
        "n = 30, at most 4% at n = 15.",
        "",
        *_table_head("shape", few),
    ]
    ni_cells: dict[tuple[str, int], float] = {}

    def ni_cell(name: str, shape: Shape, n: int) -> str:
        cell = analytic_trials(trials, n)
        r = measure("auto", shape, n, cell, seed_for("ni", name, n), shift=-0.1)
        ni_cells[name, n] = r.lib
        return f"{_pct(r.lib)} ± {_pct(r.se(r.lib))}"

    out += _shape_rows(few, ni_cell)
    out += ["", *_band_lines(ni_cells, "pass", ledger)]
    print("  non-inferiority done", file=sys.stderr, flush=True)
    power_trials = max(POWER_TRIALS, resampling_trials(trials))
    out += power_section(few, power_trials, ledger)
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
        "mean 0): false fails of `auto` of a higher-is-better metric, the share of those "
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
        "higher-is-better metric fails, procedure `auto`. Without a correction the expected "
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
    tail_trials = 4 * analytic_trials(trials, 30)
    auto_tail, t_tail, share = far_tail(
        SHAPES["heavy-t2"], 30, tail_trials, seed_for("tail", 30), ALPHA / 5
    )
    out += [
        "",
        f"In the far tail: Holm's first step tests at α/5, where a single `heavy-t2` check "
        f"at n = 30 fails falsely {auto_tail:.2%} one-sided under `auto` against "
        f"{ALPHA / 10:.2%} nominal ({_pct(share)}% of those on the samples where `auto` "
        f"corrects for skewness), and {t_tail:.2%} under `t` ({tail_trials:,} trials). "
        "The skewness correction alone (before plain t had to agree) measured 0.89% there.",
    ]
    maxt_trials = 2000
    out += [
        "",
        '### Engine max-T (`paired_bootstrap_many(..., correction="maxt")`)',
        "",
        'Two-sided family-wise rate of `significant_adjusted` with `method="permutation"`, '
        "k independent normal metrics, n = 30, 999 sign flips, nothing changed; beside it "
        "the same tests with a Šidák correction. Each metric's max-T scale is sqrt(Σ d²) "
        "(no sign flip changes it); with the bootstrap SE as the scale the same cells "
        f"measured 8.7% / 9.4%. {maxt_trials:,} trials per cell (SE ±0.5).",
        "",
        "| k | max-T | Šidák |",
        "|---:|---:|---:|",
    ]
    for k in (5, 10):
        maxt, sidak = engine_maxt(k, 30, maxt_trials, seed_for("maxt", k))
        out.append(f"| {k} | {_pct(maxt)} | {_pct(sidak)} |")
    out += ledger.section()
    out += ["", READING, "", f"_Generated in {time.time() - started:.0f} s._", ""]
    return "\n".join(out), ledger


READING: Final = """## Reading it

- **The default `auto`** decides each verdict with `skew-t` where the skewness runs
  *deep*, with `t+skew-t` where it is only *stable*, and with plain `t` elsewhere; the
  verdict's `procedure` field (and the report line) names which. `t+skew-t` is the union
  of the plain t interval and the `skew-t` (Hall's skewness-corrected t) interval, with
  the larger of their two p-values: a change counts only where both procedures find it.
  Stable: fewer than half the cases share one difference, and the sample skewness keeps
  its sign, at least 0.1 in size, once the k = max(3, ⌈n/20⌉) most extreme cases on its
  side are set aside, and (at 20-200 cases) the samples that leave one case out do not
  have their means and skewnesses in lockstep (correlation below −0.95: two groups of
  cases, whose sizes set both; docs/design/statistics.md, "Two modes"). Deep: stable,
  and it also keeps its sign, at least 0.2 in size, once the max(5, ⌈0.15·n⌉) most
  extreme cases on its side are set aside.
- **Why.** Symmetric heavy-tailed differences (`heavy-t2/t3`), nDCG of rankers sharing
  their noise (`ndcg-shared`) and real TREC runs under a coin-flip null are symmetric,
  so plain `t` (and the sign-flip test) hold there; their *sample* skewness is the noise
  of one to three extreme cases, and correcting for it (`skew-t`, the old default
  wherever fewer than half the cases tied) fails falsely 4-7% and loses 5-16 points of
  power against `t`. A genuinely skewed parent (`right-/left-skewed`, `bounded-*`) keeps
  its skewness when those cases are set aside, and there `t` fails falsely 6-10% while
  the correction holds. Rules measured and rejected while choosing (the exploration is
  summarised in docs/design/statistics.md): gating on the jackknife SE of the skewness,
  shrinking g1 by it, a Bowley-quantile skewness gate, leave-one-out sign stability, and
  requiring both `t` and `skew-t` on *every* sample (it holds every false-fail cell, but
  loses as much power as `skew-t` where the skewness is noise). Correcting with `skew-t`
  alone where the skewness is stable was the first pass of this rule; held-out symmetric
  shapes whose extreme cases outnumber the trimming pass the stability test about one
  sample in nine and failed falsely far above t there, so the stable branch is guarded by
  t (docs/design/statistics.md, "Guarded by plain t"). Also measured and rejected: a half
  guard, the union of `skew-t` at the sample skewness and at half of it, which brings the
  skewed shapes' coverage to 95.9-96.1% but fails falsely 3.6-3.9% on a contaminated
  normal at n = 50 and 3.1-3.4% on correlated nDCG at n = 15. What the guard cost was
  the far side of a skewed parent: plain t's conservative end, 0.5-2.1% one-sided from
  n = 15 and coverage 96.7-97.9%. Where the skew runs deep (it survives setting aside 15%
  of the cases on its side, at least 5) the symmetric parents above rarely are, so there
  `skew-t` decides alone (docs/design/statistics.md, "Dropping the guard where the skew
  runs deep").
- **What it costs now.** At n = 15 few samples of 15 show a deep skew, and Hall's
  correction left the far end (the one away from the skew) conservative even where it
  decides alone; that end now uses a larger skewness, γ·(1 + 6/n), so the far side of the
  skewed shapes is 1.7-1.9% at n = 15 (1.2-1.3% before) and the bounded shapes' coverage
  96.2% (96.8% before; 96.0% at n = 20, which has no target); from n = 30 the far side is
  at 2.5-2.8% and coverage 94.7-96.0% on every skewed and bounded cell
  (docs/design/statistics.md, "The far end at small n"). The bounded shapes' other side
  is over-corrected (1.4-1.9% at n = 15-100): the small-sample factor on the skewness was
  measured on Exp, whose sample skewness runs lower than theirs, and no threshold of the
  stable test helps there (docs/design/statistics.md, "The stability threshold at
  n = 15"). That threshold is 0.1: with plain t as the guard a lower one no longer lets
  the symmetric parents fail falsely more often; it corrects more of a skewed parent's
  small samples and costs power where `t` holds (0.05 put `heavy-t2` at n = 15 more than
  3 points below `t`).
  On the skewed shapes the small-n cells (n = 10-15) sit above the
  n ≥ 30 band, because a sample that happens to hold none of the parent's big values
  shows no stable skewness and gets plain t; on the correlated-nDCG shape the cells at
  n = 15-30 are the highest of the claimed shapes. The targets section above reads the
  worst cells off this run.
- **Below 30 cases** verdicts carry a `small_n` warning. A skewed metric with ties
  (`skewed+ties`: half the cases tied, the rest Exp(1) − 1) is a skewed sample of the
  untied cases alone: `auto` sets the tie spike aside and reads the skewness from them
  (docs/design/statistics.md, "Ties"), failing falsely 6.2-7.9% at n = 15-20 (under 10
  untied cases plain t decides: a rare-large-win sample in most draws), 4.0% at n = 30 and
  2.3-2.9% from n = 50, where the whole-sample rule read 5.4-9.0% at n = 15-100; plain t,
  the bootstrap and the sign-flip test fail falsely 4.7-13.2% at n = 15-100.
- **`bootstrap` and `permutation`** (opt-in per check): the percentile bootstrap
  over-rejects at small n on every shape; the sign-flip test is exact on the symmetric
  shapes (mid-p: slightly above 2.5%) and wrong on skewed ones. The studentized paired
  bootstrap (bootstrap-t, measured as a candidate for the default) fixes most of the skew
  but over-rejects on tied, binary, heavy-tailed and correlated-nDCG differences at
  n = 30 (its table): no paired bootstrap meets the targets on every claimed shape, so
  `auto` decides, and a verdict's details show the spec's percentile bootstrap interval
  beside it with one line saying why it did not decide.
- **Power.** Where `t` holds, `auto` stays within a few points of `t` (table "Power
  against plain t"); the old default lost 5-16 points on the heavy-tailed shapes. The
  figure a verdict reports (`detectable_regression`) is simulated from the check's
  method on the eval's own differences, with an allowance for the uncertainty of its own
  spread (kurtosis, skewness by 1/n, and a stable skewness toward the good side by 1/n²
  as well: without that term left-skewed differences realised 71% at n = 15); the range
  it is realised at is read off the table above. It was 72% on right-skewed differences
  at n = 30 when the allowance weighed the skewness toward the bad side only, by 1/√n,
  and the procedure this sample chose stood in for `auto`. The real data at n = 100 used
  to show 72-76%: the second eval then compared another pair of runs, with another
  spread; it now compares the same pair. On discrete data with a handful of discordant
  cases (binary at n = 10 with 90% ties) no test reaches its nominal level: `evalkit
  power`'s simulated column shows it, since a resample holding only tied cases is no
  evidence of a shift (the simulation used to count it as a detection).
- **Aggregates.** latency_p95 below 20 cases is each run's maximum, and its bootstrap
  fails falsely 7-11%: the gate refuses such a check. From 20 cases on it measured
  3.5-4.2% at n = 20, 2.9-3.1% at n = 30 and below nominal from 50 (conservative).
- **A rare large win** (outside the claims): a change that wins big on a few cases and
  loses a little on the rest fails falsely under every procedure at small n, and every
  such false fail below 60 cases is on a sample with no win at all: the `no_wins`
  warning fires on exactly those samples. No procedure can tell such a sample from a
  clean regression; only more cases, or cases chosen to cover what the change targets,
  can.
- **Family-wise**: the header's rate is computed for the decision made (one-sided,
  correlated, corrected; `stats/familywise.py`) and names the correction that decided
  (Holm where max-T could not run). It models normal differences. With heavy-tailed
  metrics under Holm the gate fails falsely about as often as it says (`heavy-t2` 2.8%,
  `heavy-t3` 2.9% at k = 5, n = 30, 2,000 gates a cell, against about 2.5%: the rows
  above); the skewness correction alone made those 5.0% and 3.9%, and while plain t
  guarded every corrected sample, 0.9% and 2.1%. Without a correction the header's
  1 − (1 − α/2)^k is an upper figure for independent heavy-tailed metrics (10.8-11.2%
  against 11.9% in this run).
- **Per-slice checks** (their false discovery rate under a global null and with truly
  regressed slices, overlapping tags, power per slice size) are measured by
  `tests/statistics/test_slice_fdr_simulation.py` and published in
  [slices.md](slices.md#measured), beside what they describe."""


def _redo_power(path: Path) -> int:
    """Replace the realised-power section of ``path`` by a fresh measurement."""
    text = path.read_text(encoding="utf-8")
    head, sep, rest = text.partition("\n## Power: the reported detectable effect, realised\n")
    _, sep2, tail = rest.partition("\n## Small-n aggregates")
    if not sep or not sep2:
        raise SystemExit(f"error: {path} has no realised-power section to replace")
    started = time.time()
    ledger = Ledger()
    section = "\n".join(power_section((15, 30, 100, 300), POWER_TRIALS, ledger))
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
    parser = argparse.ArgumentParser(prog="python -m evalkit.stats.calibrate")
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
    trials = args.trials or (1000 if args.quick else 100_000)
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
