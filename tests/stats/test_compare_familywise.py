"""``evalkit compare``'s correction across comparisons, by simulation on worlds of known truth.

Under the null every run draws its per-case values from the reference's own
distribution, so any "better" or "worse" is a false alarm.  Each world compares
``K`` runs with one reference on one metric; the family-wise rate is the share of
worlds with at least one false alarm.  Holm must hold it at α (within Monte Carlo
error); without a correction it must sit well above α, or the test could not tell
the two apart.  Worlds are seeded, so the figures are the same on every run.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalkit._spec.artifact import RunArtifact
from evalkit.gate.compare import NO_CHANGE, compare_runs
from helpers.compare_artefacts import artefact

# A simulation: `uv run pytest -m slow` (and .ci/run) runs it, the fast tier skips it.
pytestmark = pytest.mark.slow

K = 3  # compared runs per world
N = 40  # cases
WORLDS = 1000
ALPHA = 0.05


def world(rng: np.random.Generator, shifts: list[float]) -> tuple[RunArtifact, list[RunArtifact]]:
    # a case effect shared by every run (cases differ in difficulty) plus per-run noise
    difficulty = rng.uniform(0.2, 0.8, N)
    ref = artefact("ref", np.clip(difficulty + rng.normal(0, 0.1, N), 0, 1))
    runs = [
        artefact(f"run{k}", np.clip(difficulty + s + rng.normal(0, 0.1, N), 0, 1))
        for k, s in enumerate(shifts)
    ]
    return ref, runs


def false_alarm_rates() -> dict[str, float]:
    rng = np.random.default_rng(20261201)
    alarms = {"holm": 0, "none": 0}
    for _ in range(WORLDS):
        ref, runs = world(rng, [0.0] * K)
        for correction in alarms:
            table = compare_runs(runs, ref, correction=correction, alpha=ALPHA)
            rows = [c.rows[0] for c in table.comparisons]
            alarms[correction] += any(r.direction != NO_CHANGE for r in rows)
    return {c: a / WORLDS for c, a in alarms.items()}


def test_holm_holds_the_family_wise_false_alarm_rate_across_comparisons() -> None:
    rates = false_alarm_rates()
    se = math.sqrt(ALPHA * (1 - ALPHA) / WORLDS)  # 0.7 points at 1000 worlds
    assert rates["holm"] <= ALPHA + 3 * se, rates
    # the uncorrected family is clearly above α: 1 − 0.95³ ≈ 14% if independent
    assert rates["none"] >= ALPHA + 3 * se, rates
    assert rates["holm"] < rates["none"], rates


def test_holm_still_finds_a_real_change_and_names_its_direction() -> None:
    rng = np.random.default_rng(7)
    ref, runs = world(rng, [0.1, 0.0, -0.1])
    table = compare_runs(runs, ref)
    assert [c.rows[0].direction for c in table.comparisons] == ["better", NO_CHANGE, "worse"]
    for c in table.comparisons:
        row = c.rows[0]
        assert row.p_adjusted is not None
        assert row.p_adjusted >= row.p_value
        # the interval is at the corrected level, never narrower than the plain 95% one
        assert row.confidence >= 0.95
