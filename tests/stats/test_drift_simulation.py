"""Issue #16's simulations: the slow slide a per-PR gate cannot see, and a flat history.

Ten promotions each lose 0.4·σ_d/√n: each step is within noise of the one before
(its own t statistic is −0.4), so every per-PR `no_significant_regression` check
passes, and each passing candidate is promoted.  The drift check compares with the
reference (promotion 0), where the losses add up: after k steps the t statistic is
−0.4·k, so it must fail from the first k with 0.4·k > t(1 − α/2, n − 1), and every
candidate whose cumulative loss reaches the eval's 80%-power detectable regression
must be caught with at least 80% probability.  Under a flat history the drift check's
false-alarm rate must stay at its level, however many promotions separate the
candidate from the reference.

Truth comes from the construction (tests/helpers/drift_runs.py) and closed-form quantiles,
never from the gate's own code.  Default sizes keep CI under a minute;
``EVALKIT_CALIBRATION=full`` runs five times the trials.
"""

from __future__ import annotations

import math
import os
from typing import Final

import numpy as np
import pytest
from scipy import stats  # type: ignore[import-untyped]  # dev-only, no stubs

from evalkit._spec.checks import CheckSpec
from evalkit.gate.model import CheckVerdict, GateOptions
from evalkit.gate.procedure import evaluate_gate
from evalkit.gate.reference import Reference
from evalkit.stats.names import GateMethod as Method
from helpers.drift_runs import METRIC, Values, exact_history, random_history, run

# A simulation: `uv run pytest -m slow` (and .ci/run) runs it, the fast tier skips it.
pytestmark = pytest.mark.slow

FULL: Final = os.environ.get("EVALKIT_CALIBRATION", "").lower() == "full"
SCALE: Final = 5 if FULL else 1

N: Final = 100  # cases
STEPS: Final = 10  # promotions after the reference
SD_D: Final = 0.05  # SD of one step's per-case differences
LOSS: Final = 0.4 * SD_D / math.sqrt(N)  # what each promotion loses
ALPHA: Final = 0.05
OPTIONS: Final = GateOptions(n_resamples=2_000, seed=7)
# A rate is refused only when the data would be this unlikely under the rate claimed.
IMPLAUSIBLE: Final = 1e-3

T_CRIT: Final = float(stats.t.ppf(1 - ALPHA / 2, N - 1))  # the interval's half-width in SEs
T_POWER: Final = float(stats.t.ppf(0.80, N - 1))
# First step whose realised cumulative loss lies beyond the interval (exact histories).
K_SIGNIFICANT: Final = next(k for k in range(1, STEPS + 1) if 0.4 * k > T_CRIT)
# First step whose true cumulative loss reaches the 80%-power detectable regression.
K_DETECTABLE: Final = next(k for k in range(1, STEPS + 1) if 0.4 * k >= T_CRIT + T_POWER)


def checks(method: Method) -> list[CheckSpec]:
    mode: Final = "no_significant_regression"
    return [
        CheckSpec(id="per_pr", metric=METRIC, vs_baseline=mode, method=method),
        CheckSpec(id="drift", metric=METRIC, vs_reference=mode, method=method),
    ]


def gate_step(
    history: list[Values], k: int, method: Method = "auto"
) -> tuple[CheckVerdict, CheckVerdict]:
    """Promotion k's PR gate: vs the last promotion (k − 1) and vs the reference (0)."""
    reference = Reference.of(run("promotion-0", history[0]), "pinned: promotion 0")
    report = evaluate_gate(
        checks(method),
        run(f"promotion-{k}", history[k]),
        run(f"promotion-{k - 1}", history[k - 1]),
        OPTIONS,
        reference=reference,
    )
    step, drift = report.verdicts
    return step, drift


def test_the_truth_the_simulations_rest_on() -> None:
    """Which steps the drift check must catch, from the t quantiles alone."""
    assert K_SIGNIFICANT == 5  # 0.4·5 = 2.0 > t(0.975, 99) = 1.984
    assert K_DETECTABLE == 8  # 0.4·8 = 3.2 ≥ 1.984 + 0.845
    history = exact_history(N, STEPS, LOSS, SD_D, seed=1)
    ids = list(history[0])
    for i, j in [(0, 1), (4, 5), (0, 7), (2, 9), (0, 10)]:
        d = np.array([history[j][c] - history[i][c] for c in ids])
        assert d.mean() == pytest.approx(-(j - i) * LOSS, abs=1e-12)
        assert d.std(ddof=1) == pytest.approx(SD_D, rel=1e-9)
        assert stats.skew(d) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("method", ["t", "auto"])
def test_a_slide_of_ten_passing_steps_fails_the_drift_check_from_the_detectable_step(
    method: Method,
) -> None:
    history = exact_history(N, STEPS, LOSS, SD_D, seed=1)
    first_fail = None
    for k in range(1, STEPS + 1):
        step, drift = gate_step(history, k, method)
        assert step.status == "pass", (k, step.message)  # each step passes on its own
        assert step.comparison is not None
        assert step.comparison.delta == pytest.approx(-LOSS, rel=1e-9)
        assert drift.comparison is not None
        assert drift.comparison.delta == pytest.approx(-k * LOSS, rel=1e-9)
        expected = "fail" if k >= K_SIGNIFICANT else "pass"
        assert drift.status == expected, (k, drift.message)
        if drift.status == "fail" and first_fail is None:
            first_fail = k
        # the gate's own power statement: a cumulative loss it says it detects is caught
        mde = drift.comparison.mde
        assert mde is not None
        assert mde == pytest.approx((T_CRIT + T_POWER) * SD_D / math.sqrt(N), rel=0.15)
        if k * LOSS >= mde:
            assert drift.status == "fail", (k, mde, drift.message)
    assert first_fail == K_SIGNIFICANT


def binom_tail_above(count: int, trials: int, rate: float) -> float:
    """P(X ≥ count) for X ~ Binomial(trials, rate)."""
    return float(stats.binom.sf(count - 1, trials, rate))


def binom_tail_below(count: int, trials: int, rate: float) -> float:
    """P(X ≤ count) for X ~ Binomial(trials, rate)."""
    return float(stats.binom.cdf(count, trials, rate))


def test_random_slides_are_caught_by_the_detectable_step_with_80_percent_power() -> None:
    """Fresh noise per promotion; at least 80% of histories fail the drift check by step 8."""
    trials = 60 * SCALE
    rng = np.random.default_rng(2026)
    caught = 0
    step_fails = 0
    for _ in range(trials):
        history = random_history(N, K_DETECTABLE, LOSS, SD_D / math.sqrt(2), rng)
        failed = False
        for k in range(1, K_DETECTABLE + 1):
            step, drift = gate_step(history, k)
            step_fails += step.status == "fail"
            failed = failed or drift.status == "fail"
        caught += failed
    print(  # the figures docs/drift.md quotes (pytest -s)
        f"\ndrift caught by step {K_DETECTABLE}: {caught}/{trials} = {caught / trials:.1%}; "
        f"per-PR step failures: {step_fails}/{trials * K_DETECTABLE} = "
        f"{step_fails / (trials * K_DETECTABLE):.1%}"
    )
    # Not implausibly few if the chance were 80% (the truth is about 0.89 at step 8 alone).
    assert binom_tail_below(caught, trials, 0.80) > IMPLAUSIBLE, (caught, trials)
    # Each step alone fails about Φ(0.4 − 1.98) ≈ 5.7% of the time: within noise, as designed.
    per_step = float(stats.norm.cdf(0.4 - T_CRIT))
    n_steps = trials * K_DETECTABLE
    assert binom_tail_above(step_fails, n_steps, per_step) > IMPLAUSIBLE, (step_fails, n_steps)
    assert step_fails < caught


def test_a_flat_history_keeps_the_drift_false_alarm_rate_at_alpha() -> None:
    """However many promotions lie between the reference and the candidate.

    Every trial is its own flat history, gated once at step 1 + trial mod 10, so
    the trials are independent and each step gets the same share.
    """
    trials = 600 * SCALE
    rng = np.random.default_rng(16)
    alarms = np.zeros(STEPS + 1, dtype=int)
    tried = np.zeros(STEPS + 1, dtype=int)
    for trial in range(trials):
        k = 1 + trial % STEPS
        history = random_history(N, k, 0.0, SD_D / math.sqrt(2), rng)
        _, drift = gate_step(history, k)
        alarms[k] += drift.status == "fail"
        tried[k] += 1
    total = int(alarms.sum())
    print(  # the figures docs/drift.md quotes (pytest -s)
        f"\nflat history: drift false alarms {total}/{trials} = {total / trials:.2%}; "
        f"per step: {', '.join(f'{k}: {alarms[k]}/{tried[k]}' for k in range(1, STEPS + 1))}"
    )
    # At most alpha (the interval's bad side alone is alpha/2 by design)...
    assert binom_tail_above(total, trials, ALPHA) > IMPLAUSIBLE, (total, trials)
    # ... and alpha/2 it is: neither inflated nor a check that never fires.
    assert binom_tail_above(total, trials, ALPHA / 2) > IMPLAUSIBLE, (total, trials)
    assert binom_tail_below(total, trials, ALPHA / 2) > IMPLAUSIBLE, (total, trials)
    # Far from the reference (steps 6-10) is no worse than near it.
    far, far_tried = int(alarms[6:].sum()), int(tried[6:].sum())
    assert binom_tail_above(far, far_tried, ALPHA) > IMPLAUSIBLE, (far, far_tried)
