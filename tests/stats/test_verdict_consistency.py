"""Decision, "p ≤ α" and "the interval excludes the tested value" never disagree.

Checked on thousands of generated data sets (continuous, binary, tie-heavy, skewed,
n from 2 to 200) for every procedure, at several levels and tested values (0 for
no_significant_regression and the two-sided compare, ±margin for non-inferiority),
on the raw outputs before :func:`agree` touches them, and end to end through the gate
with and without a correction.  Known answers: t against scipy, the bootstrap
interval against ``paired_bootstrap``, the exact permutation p against brute force.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy import stats  # type: ignore[import-untyped]  # dev-only, no stubs

from evalkit._model.results import CaseResult, QueryResult, RunResult
from evalkit._spec.artifact import GoldensInfo, RunArtifact, build_artifact
from evalkit._spec.checks import CheckSpec
from evalkit._util.figures import signed
from evalkit.errors import EvalkitError
from evalkit.gate.model import GateOptions
from evalkit.gate.procedure import evaluate_gate
from evalkit.stats.clustered_decide import evaluator_by_cluster
from evalkit.stats.procedures import Evaluator, agree
from evalkit.stats.sign_flips import SignFlipNull, SignFlips
from evalkit.stats.significance import paired_bootstrap
from evalkit.targets.base import TargetResponse

# A simulation: `uv run pytest -m slow` (and .ci/run) runs it, the fast tier skips it.
pytestmark = pytest.mark.slow

FloatArray = NDArray[np.float64]
PROCEDURES = ("t", "bootstrap", "permutation")


def generated(rng: np.random.Generator, trial: int) -> FloatArray:
    n = int(rng.choice([2, 3, 5, 8, 12, 20, 30, 50, 200]))
    kind = trial % 5
    if kind == 0:
        d = rng.normal(rng.normal(0, 0.1), 1.0, n)
    elif kind == 1:
        d = (rng.random(n) < 0.5).astype(float) - (rng.random(n) < 0.45)
    elif kind == 2:
        d = np.where(rng.random(n) < 0.7, 0.0, np.round(rng.normal(0, 0.3, n), 1))
    elif kind == 3:
        d = rng.exponential(1.0, n) - 1.0 + rng.normal(0, 0.3)
    else:
        d = np.round(1.0 - rng.exponential(1.0, n), 2) * 0.2
    return np.asarray(d, dtype=np.float64)


def evaluator(procedure: str, d: FloatArray, rng: np.random.Generator) -> Evaluator:
    if procedure == "bootstrap":
        resampled = d[rng.integers(0, d.shape[0], size=(499, d.shape[0]))].mean(axis=1)
        return Evaluator("bootstrap", float(d.mean()), resampled=resampled)
    if procedure == "permutation":
        flips = SignFlips.draw(d.shape[0], 499, rng)
        return Evaluator("permutation", float(d.mean()), diffs=d, flips=flips)
    return Evaluator(procedure, float(d.mean()), diffs=d)  # type: ignore[arg-type]


@pytest.mark.parametrize("procedure", PROCEDURES)
def test_raw_interval_and_p_agree_on_thousands_of_data_sets(procedure: str) -> None:
    rng = np.random.default_rng([*b"consistency", PROCEDURES.index(procedure)])
    checked = disagreements = 0
    for trial in range(1500 if procedure == "t" else 150):
        d = generated(rng, trial)
        ev = evaluator(procedure, d, rng)
        spread = float(np.std(d)) or 1.0
        for alpha in (0.05, 0.01, 0.2):
            for tested in (0.0, -0.2 * spread, 0.2 * spread, float(d.mean())):
                low, high, p = ev.raw(alpha, tested)
                excluded = low > tested or high < tested
                checked += 1
                if excluded != (p <= alpha):
                    # only float rounding exactly at the boundary may disagree
                    assert abs(p - alpha) < 1e-9, (procedure, d.tolist(), alpha, tested, p)
                    disagreements += 1
                assert low <= float(d.mean()) <= high
    assert disagreements <= checked // 10_000
    assert checked >= 1800


def test_agree_only_settles_the_boundary() -> None:
    assert agree(0.1, 0.2, 0.0, 0.05 + 1e-16, 0.05) == 0.05
    assert agree(-0.1, 0.2, 0.0, 0.05, 0.05) > 0.05
    assert agree(-0.1, 0.2, 0.0, 0.3, 0.05) == 0.3
    assert agree(0.1, 0.2, 0.0, 0.001, 0.05) == 0.001


def test_t_is_scipys_paired_t() -> None:
    rng = np.random.default_rng(5)
    for n in (2, 5, 30, 300):
        d = rng.normal(0.1, 1.0, n)
        low, high, p = Evaluator("t", float(d.mean()), diffs=d).raw(0.05, 0.0)
        reference = stats.ttest_1samp(d, 0.0)
        ci = reference.confidence_interval(0.95)
        assert p == pytest.approx(reference.pvalue, abs=1e-10)
        assert (low, high) == pytest.approx((ci.low, ci.high), abs=1e-10)


def brute_force_mid_p(d: FloatArray, shift: float) -> float:
    observed = abs(float(np.sum(d - shift)))
    if observed <= 1e-12:
        return 1.0
    greater = equal = 0
    for signs in itertools.product((1.0, -1.0), repeat=d.shape[0]):
        value = abs(float(np.dot(signs, d - shift)))
        if math.isclose(value, observed, rel_tol=1e-9, abs_tol=1e-12):
            equal += 1
        elif value > observed:
            greater += 1
    return float((greater + equal / 2) / 2 ** int(d.shape[0]))


def test_exact_permutation_p_is_brute_force_enumeration() -> None:
    rng = np.random.default_rng(11)
    for trial in range(40):
        n = int(rng.integers(2, 11))
        d = np.round(rng.normal(0, 1, n), 1) if trial % 2 else (rng.integers(0, 6, n) / 5.0 - 0.4)
        flips = SignFlips.draw(n, 2**n, rng)
        assert flips.exact
        null = SignFlipNull.of(d, flips)
        for shift in (0.0, 0.2, float(d.mean())):
            got = float(null.p(np.array([shift]))[0])
            assert got == pytest.approx(brute_force_mid_p(d, shift), abs=1e-12)


def run(name: str, values: FloatArray) -> RunResult[QueryResult]:
    return RunResult(
        name, [QueryResult(f"q{i:03d}", [], {"ndcg@10": float(v)}) for i, v in enumerate(values)]
    )


def test_the_bootstrap_interval_is_paired_bootstraps() -> None:
    rng = np.random.default_rng(4)
    for n, discrete in ((40, False), (40, True), (300, False)):
        a, b = rng.random(n), rng.random(n)
        if discrete:
            a, b = np.round(a * 5) / 5, np.round(b * 5) / 5
        spec = paired_bootstrap(run("a", a), run("b", b), "ndcg@10", n_resamples=999, seed=3)
        ev, _ = evaluator_by_cluster(
            run("a", a), run("b", b), "ndcg@10", method="bootstrap", n_resamples=999, seed=3
        )
        decision = ev.decide(0.05)
        assert (decision.low, decision.high) == (spec.ci_low, spec.ci_high)
        assert decision.estimate == spec.observed


# ----------------------------------------------------------------------------- the gate


LOWER_IS_BETTER = "calibration_lower_is_better"


def artifact(name: str, values: FloatArray, hib: bool) -> RunArtifact:
    from evalkit._model.registry import get_metric, register_metric

    metric = "ndcg@10" if hib else LOWER_IS_BETTER
    if not hib:
        try:
            get_metric(metric)
        except EvalkitError:
            register_metric(metric, higher_is_better=False)(lambda response, case: 0.0)
    rows = [
        CaseResult(f"q{i:03d}", TargetResponse([f"q{i:03d}"], latency_ms=1.0), {metric: float(v)})
        for i, v in enumerate(values)
    ]
    ids = {f"q{i:03d}": f"fp{i}" for i in range(len(values))}
    return build_artifact(
        RunResult(name, rows),
        [metric],
        goldens=GoldensInfo("set", ids),
        git=("beef", False),
        seed=1,
    )


def check_line(v: Any, alpha: float) -> None:
    c = v.comparison
    assert c is not None
    bad_side = c.ci_high < c.tested_value if v.higher_is_better else c.ci_low > c.tested_value
    p = c.p_adjusted if c.p_adjusted is not None else c.p_value
    estimate_bad = c.delta < c.tested_value if v.higher_is_better else c.delta > c.tested_value
    if v.mode == "non_inferiority":
        within = c.ci_low > c.tested_value if v.higher_is_better else c.ci_high < c.tested_value
        assert (v.status == "pass") == within
        assert within == (c.p_value <= alpha and not estimate_bad)
        return
    assert (v.status == "fail") == bad_side
    assert bad_side == (p <= alpha and estimate_bad)
    excluded = c.ci_low > 0 or c.ci_high < 0
    assert excluded == (p <= alpha)
    assert f"{signed(c.ci_low)}, {signed(c.ci_high)}" in v.message


@pytest.mark.parametrize("hib", [True, False])
@pytest.mark.parametrize("method", ["auto", "t", "bootstrap", "permutation"])
def test_every_gate_line_agrees_with_itself(method: str, hib: bool) -> None:
    metric = "ndcg@10" if hib else LOWER_IS_BETTER
    rng = np.random.default_rng([*b"gate", len(method), int(hib)])
    options = GateOptions(n_resamples=299, seed=5)
    for trial in range(60):
        d = generated(rng, trial)
        if d.shape[0] < 5:
            continue
        base: FloatArray = rng.random(int(d.shape[0]))
        cand: FloatArray = base + d * 0.1
        checks = [
            CheckSpec(
                id="nsr",
                metric=metric,
                vs_baseline="no_significant_regression",
                method=method,  # type: ignore[arg-type]
            ),
            CheckSpec(
                id="ni",
                metric=metric,
                vs_baseline="non_inferiority",
                margin=0.02,
                method=method,  # type: ignore[arg-type]
            ),
            CheckSpec(
                id="nsr2",
                metric=metric,
                vs_baseline="no_significant_regression",
                alpha=0.2,
                method=method,  # type: ignore[arg-type]
            ),
        ]
        for correction in ("none", "holm"):
            report = evaluate_gate(
                checks,
                artifact("c", cand, hib),
                artifact("b", base, hib),
                GateOptions(options.n_resamples, options.seed, correction=correction),
            )
            for v, spec in zip(report.verdicts, checks, strict=True):
                assert v.status != "error", v.message
                check_line(v, float(spec.alpha or 0.05))
