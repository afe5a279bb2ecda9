"""Power analysis: the closed forms, the simulation, and the table the CLI prints."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest
from numpy.typing import NDArray

from evalkit._model.results import CaseResult, QueryResult, RunResult
from evalkit.errors import InputError, MetricError
from evalkit.stats.significance import (
    analytic_power,
    default_effects,
    mde,
    n_for_effect,
    power,
    power_table,
)
from evalkit.targets.base import TargetResponse


def run(name: str, values: Sequence[float] | NDArray[np.float64]) -> RunResult[QueryResult]:
    return RunResult(
        name, [QueryResult(f"q{i:03d}", [], {"ndcg@10": float(v)}) for i, v in enumerate(values)]
    )


def test_mde_is_about_two_point_eight_sigma_over_root_n() -> None:
    # Student quantiles with n - 1 df (the deciding tests estimate σ): scipy is the truth
    from scipy import stats  # type: ignore[import-untyped]  # dev-only, no stubs

    expected = (stats.t.ppf(0.975, 99) + stats.t.ppf(0.8, 99)) / 10
    assert mde(1.0, 100) == pytest.approx(expected, rel=1e-9)
    assert mde(1.0, 30) > (1.959964 + 0.841621) / math.sqrt(30)
    assert mde(0.3, 400) == pytest.approx(2.8 * 0.3 / 20, rel=0.01)
    d = np.random.default_rng(1).normal(0, 0.2, 500)
    assert mde(d, 500) == pytest.approx(mde(float(np.std(d, ddof=1)), 500))
    assert mde(1.0, 100, alpha=0.01, power=0.9) > mde(1.0, 100)


def test_n_for_effect_inverts_mde() -> None:
    for n in (30, 100, 1234):
        effect = mde(0.25, n)
        assert n_for_effect(0.25, effect * 1.0000001) == n
    assert n_for_effect(0.25, -0.05) == n_for_effect(0.25, 0.05)


def test_analytic_power_at_the_mde_is_the_target() -> None:
    assert analytic_power(0.3, 200, mde(0.3, 200)) == pytest.approx(0.8, abs=1e-9)
    assert analytic_power(0.3, 200, 0.0) == 0.025  # one-sided: the gate fails on one side
    assert analytic_power(0.0, 200, 0.01) == 1.0


def test_simulated_detection_agrees_with_the_closed_form() -> None:
    d = np.random.default_rng(2).normal(0, 1, 400)
    target = mde(d, 100)
    table = power(d, [0.0, target], n=100, n_sim=1500, n_resamples=400, seed=3)
    null_row, mde_row = table.rows
    assert null_row.simulated is not None
    assert mde_row.simulated is not None
    assert null_row.simulated <= 0.09
    assert mde_row.simulated == pytest.approx(0.8, abs=0.05)
    assert mde_row.analytic == pytest.approx(0.8, abs=0.02)  # sd of 400 draws, not exactly 1


def test_t_simulation_matches_bootstrap_simulation() -> None:
    d = np.random.default_rng(4).normal(0, 0.3, 200)
    effects = [0.02, 0.05, 0.1]
    boot = power(d, effects, n=150, n_sim=800, n_resamples=300)
    t = power(d, effects, n=150, n_sim=800, method="t")
    for x, y in zip(boot.rows, t.rows, strict=True):
        assert x.simulated == pytest.approx(y.simulated, abs=0.06)


def test_detection_rises_with_the_effect_and_is_reproducible() -> None:
    d = np.random.default_rng(5).exponential(0.2, 120) - 0.2
    table = power(d, [0.0, 0.02, 0.05, 0.1, -0.1], n_sim=500, n_resamples=200, seed=8)
    rates = [r.simulated for r in table.rows]
    assert rates[0] is not None
    assert rates[:4] == sorted(rates[:4])  # type: ignore[type-var]
    again = power(d, [0.0, 0.02, 0.05, 0.1, -0.1], n_sim=500, n_resamples=200, seed=8)
    assert again == table
    assert table.n == 120
    assert table.sd_diff == pytest.approx(float(np.std(d, ddof=1)))
    assert table.mde == pytest.approx(mde(d, 120))


def test_no_simulation_when_n_sim_is_zero() -> None:
    table = power([0.1, -0.2, 0.3, 0.0], [0.1], n_sim=0)
    assert table.rows[0].simulated is None
    assert table.rows[0].analytic > 0


def test_default_effects_surround_the_mde() -> None:
    effects = default_effects(0.25, 100)
    assert len(effects) == 5
    assert effects[2] == pytest.approx(mde(0.25, 100), rel=0.05)
    assert all(len(f"{e:g}".replace("0.", "").lstrip("0")) <= 2 for e in effects)
    assert default_effects(0.0, 100) == (0.0,)


def test_power_table_from_a_baseline_uses_the_paired_differences() -> None:
    rng = np.random.default_rng(6)
    base = rng.uniform(0, 1, 100)
    cand = np.clip(base + rng.normal(0, 0.2, 100), 0, 1)
    table = power_table(run("cand", cand), run("base", base), metric="ndcg@10", n_sim=200)
    assert table.metric == "ndcg@10"
    assert table.sd_source == "paired differences"
    assert table.sd_diff == pytest.approx(float(np.std(cand - base, ddof=1)))
    assert [r.effect for r in table.rows] == list(default_effects(table.sd_diff, 100))
    custom = power_table(
        run("cand", cand), run("base", base), metric="ndcg@10", effects=[0.05], n=400, n_sim=0
    )
    assert (custom.n, [r.effect for r in custom.rows]) == (400, [0.05])


def test_power_table_from_one_run_says_what_it_assumed() -> None:
    values = np.random.default_rng(7).uniform(0, 1, 80)
    table = power_table(run("only", values), metric="ndcg@10", n_sim=0)
    assert table.sd_diff == pytest.approx(float(np.std(values, ddof=1)))
    assert "ρ = 0.5" in table.sd_source


def test_power_table_refuses_aggregates_and_missing_metrics() -> None:
    rows = [CaseResult(f"c{i}", TargetResponse(["x"], latency_ms=float(i))) for i in range(5)]
    latency = RunResult("lat", rows)
    with pytest.raises(MetricError, match=r"'latency_p95' is a whole-run aggregate"):
        power_table(latency, latency, metric="latency_p95")
    with pytest.raises(MetricError, match=r"'latency_p95' is a whole-run aggregate"):
        power_table(latency, metric="latency_p95")
    with pytest.raises(MetricError, match=r"'recall@5' was not computed for run 'x'"):
        power_table(run("x", [0.1, 0.2]), metric="recall@5")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: power([0.1, 0.2, 0.3], []), r"effects must be a non-empty list"),
        (lambda: power([0.1, 0.2, 0.3], [math.nan]), r"effects must be a non-empty list"),
        (lambda: power([0.1], [0.1]), r"at least 2 values"),
        (lambda: power([0.1, math.inf], [0.1]), r"non-finite at position\(s\) 1"),
        (lambda: power([0.1, 0.2], [0.1], n=1), r"n must be an integer number of cases >= 2"),
        (lambda: power([0.1, 0.2], [0.1], alpha=2), r"alpha must lie strictly between 0 and 1"),
        (lambda: power([0.1, 0.2], [0.1], target_power=1), r"power must lie strictly between"),
        (lambda: power([0.1, 0.2], [0.1], n_sim=-1), r"n_sim must be a non-negative integer"),
        (lambda: power([0.1, 0.2], [0.1], n_resamples=0), r"n_resamples must be a positive"),
        (
            lambda: power([0.1, 0.2], [0.1], method="permutation"),
            r"supports method auto, bootstrap or t",
        ),
        (lambda: mde(-1.0, 10), r"σ_d must be a finite non-negative number"),
        (lambda: n_for_effect(0.2, 0.0), r"effect must be a non-zero finite number"),
    ],
)
def test_bad_power_inputs_are_named(call: object, message: str) -> None:
    assert callable(call)
    with pytest.raises(InputError, match=message):
        call()


@pytest.mark.parametrize("method", ["auto", "t"])
def test_simulated_power_at_no_effect_is_one_sided_like_the_analytic_figure(method: str) -> None:
    """#23: the simulation counted both sides at effect 0 (5%) beside the analytic α/2."""
    d = np.random.default_rng(3).normal(0.0, 1.0, 200)
    row = power(d, [0.0], n_sim=20_000, method=method).rows[0]
    assert row.analytic == 0.025
    assert row.simulated is not None
    assert abs(row.simulated - 0.025) < 0.005  # SE 0.0011


@pytest.mark.parametrize("method", ["auto", "t"])
def test_resamples_of_only_tied_cases_are_not_detections(method: str) -> None:
    """#23: on a discrete metric a resample of only (centred) ties is one repeated non-zero
    value, which the shift model called significant at any effect (35% at n = 10)."""
    d = np.array([0.0] * 9 + [1.0])
    rows = power(d, [0.0, 0.05], n_sim=4000, method=method).rows
    for row in rows:
        assert row.simulated is not None
        assert row.simulated < 0.05, (row.effect, row.simulated)
