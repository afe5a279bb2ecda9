"""paired_bootstrap and the engine: known answers, invariances, reproducibility, errors.

Statistics are checked against answers known in advance, against a naive
implementation of the spec's definition, and by simulation -- never by
re-deriving the implementation.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence

import numpy as np
import pytest
from numpy.typing import NDArray

from evalkit._model.registry import register_aggregate
from evalkit._model.results import CaseResult, QueryResult, Row, RunResult
from evalkit.errors import ComparisonError, InputError, MetricError
from evalkit.metrics.builtin import nearest_rank
from evalkit.stats import bootstrap as engine
from evalkit.stats.aggregates import ItemCountAggregate, NearestRankAggregate
from evalkit.stats.fixedpoint import to_fixed
from evalkit.stats.significance import (
    RESAMPLING_STREAM,
    BootstrapResult,
    compare_metrics,
    paired_bootstrap,
    paired_bootstrap_many,
)
from evalkit.stats.stream import PURPOSE_BOOTSTRAP, substream
from evalkit.targets.base import TargetResponse

FloatArray = NDArray[np.float64]
B = 2_000


def make_run(
    name: str,
    metrics: Mapping[str, Sequence[float] | FloatArray],
    ids: Sequence[str] | None = None,
) -> RunResult[QueryResult]:
    n = len(next(iter(metrics.values())))
    ids = list(ids) if ids is not None else [f"q{i:03d}" for i in range(n)]
    rows = [
        QueryResult(case_id, [], {m: float(v[i]) for m, v in metrics.items()})
        for i, case_id in enumerate(ids)
    ]
    return RunResult(name, rows)


def pair(
    a: Sequence[float] | FloatArray, b: Sequence[float] | FloatArray, metric: str = "ndcg@10"
) -> tuple[RunResult[QueryResult], RunResult[QueryResult]]:
    return make_run("cand", {metric: list(a)}), make_run("base", {metric: list(b)})


def latency_run(name: str, latencies: Sequence[float] | FloatArray) -> RunResult[CaseResult]:
    rows = [
        CaseResult(f"c{i:03d}", TargetResponse(["x"], latency_ms=lat), {"ok": 1.0})
        for i, lat in enumerate(latencies)
    ]
    return RunResult(name, rows)


def naive_bootstrap(d: FloatArray, n_resamples: int, seed: int) -> tuple[float, float, float]:
    """The spec's definition, written the obvious way (a B x n index matrix)."""
    n = d.shape[0]
    idx = substream(seed, PURPOSE_BOOTSTRAP).integers(0, n, size=(n_resamples, n))
    resampled = d[idx].mean(axis=1)
    observed = d.mean()
    low, high = np.quantile(resampled, [0.025, 0.975])
    extreme = np.count_nonzero(np.abs(resampled - observed) >= abs(observed))
    return float(low), float(high), (extreme + 1) / (n_resamples + 1)


@pytest.fixture
def noisy() -> tuple[FloatArray, FloatArray]:
    rng = np.random.default_rng(7)
    base = rng.uniform(0.2, 0.9, 120)
    return np.clip(base + rng.normal(0.03, 0.15, 120), 0, 1), base


# ---------------------------------------------------------------- known answers


def test_better_on_every_query_is_significant_with_the_floor_p() -> None:
    rng = np.random.default_rng(1)
    base = rng.uniform(0.1, 0.8, 60)
    a, b = pair(base + rng.uniform(0.05, 0.15, 60), base)
    v = paired_bootstrap(a, b, "ndcg@10", n_resamples=B)
    assert v.significant
    assert v.p_value == pytest.approx(1 / (B + 1), rel=0, abs=0)
    assert v.ci_low > 0.05
    assert v.ci_high < 0.15
    assert (v.wins, v.losses, v.ties) == (60, 0, 0)


def test_a_system_against_itself_is_exactly_nothing() -> None:
    rng = np.random.default_rng(2)
    run = make_run("same", {"ndcg@10": rng.uniform(0, 1, 50).tolist()})
    v = paired_bootstrap(run, run, "ndcg@10", n_resamples=B)
    assert v.observed == 0.0
    assert v.p_value == 1.0
    assert not v.significant
    assert (v.ci_low, v.ci_high) == (0.0, 0.0)
    assert v.ties == 50


def test_a_small_noisy_edge_straddles_zero() -> None:
    rng = np.random.default_rng(3)
    base = rng.uniform(0.2, 0.8, 100)
    a, b = pair(base + rng.normal(0.005, 0.2, 100), base)
    v = paired_bootstrap(a, b, "ndcg@10", n_resamples=B)
    assert v.ci_low < 0 < v.ci_high
    assert not v.significant
    assert v.p_value > 0.05


def test_matches_the_naive_definition_on_the_same_stream(
    noisy: tuple[FloatArray, FloatArray],
) -> None:
    a, b = pair(*noisy)
    v = paired_bootstrap(a, b, "ndcg@10", n_resamples=B, seed=11)
    low, high, p = naive_bootstrap(noisy[0] - noisy[1], B, 11)
    assert v.ci_low == pytest.approx(low, abs=1e-12)
    assert v.ci_high == pytest.approx(high, abs=1e-12)
    assert v.p_value == p
    assert v.observed == a.mean("ndcg@10") - b.mean("ndcg@10")


def test_the_p_value_counts_the_centred_null_with_plus_one() -> None:
    d = np.random.default_rng(6).normal(0.05, 0.3, 100)  # continuous: the generic path
    v = compare_metrics({"m": d}, n_resamples=B, seed=5)["m"]
    assert v.resampling == "indices"
    _, _, p = naive_bootstrap(d, B, 5)
    assert v.p_value == p
    assert v.p_value >= 1 / (B + 1)


def test_swapping_the_systems_mirrors_everything(noisy: tuple[FloatArray, FloatArray]) -> None:
    a, b = pair(*noisy)
    ab = paired_bootstrap(a, b, "ndcg@10", n_resamples=B)
    ba = paired_bootstrap(b, a, "ndcg@10", n_resamples=B)
    assert ba.observed == -ab.observed
    assert ba.ci_low == pytest.approx(-ab.ci_high, abs=1e-14)
    assert ba.ci_high == pytest.approx(-ab.ci_low, abs=1e-14)
    assert ba.p_value == ab.p_value
    assert (ba.wins, ba.losses) == (ab.losses, ab.wins)
    assert (ba.name_a, ba.name_b) == ("base", "cand")


@pytest.mark.parametrize("side", ["a", "b", "both"])
def test_shuffling_rows_changes_nothing(noisy: tuple[FloatArray, FloatArray], side: str) -> None:
    a, b = pair(*noisy)
    before = paired_bootstrap(a, b, "ndcg@10", n_resamples=B)
    shuffler = random.Random(4)
    rows_a, rows_b = list(a.per_query), list(b.per_query)
    if side in ("a", "both"):
        shuffler.shuffle(rows_a)
    if side in ("b", "both"):
        shuffler.shuffle(rows_b)
    after = paired_bootstrap(RunResult("cand", rows_a), RunResult("base", rows_b), "ndcg@10", B)
    assert after == before


def test_pairing_is_by_id_not_by_position() -> None:
    a = make_run("cand", {"m": [1.0, 0.0, 0.5]}, ids=["x", "y", "z"])
    b = make_run("base", {"m": [0.5, 1.0, 0.0]}, ids=["z", "x", "y"])
    v = paired_bootstrap(a, b, "m", n_resamples=200)
    # by id: x 1-1, y 0-0, z .5-.5 -> no difference at all (by position it would be +0)
    assert (v.wins, v.losses, v.ties) == (0, 0, 3)
    assert v.p_value == 1.0


def test_same_seed_same_result_other_seed_other_draws(
    noisy: tuple[FloatArray, FloatArray],
) -> None:
    a, b = pair(*noisy)
    first = paired_bootstrap(a, b, "ndcg@10", n_resamples=B, seed=9)
    assert paired_bootstrap(a, b, "ndcg@10", n_resamples=B, seed=9) == first
    other = paired_bootstrap(a, b, "ndcg@10", n_resamples=B, seed=10)
    assert other.ci_low != first.ci_low
    assert other.observed == first.observed


def test_a_generator_seed_is_recorded_as_an_integer(
    noisy: tuple[FloatArray, FloatArray],
) -> None:
    a, b = pair(*noisy)
    v = paired_bootstrap(a, b, "ndcg@10", n_resamples=200, seed=np.random.default_rng(3))
    again = paired_bootstrap(a, b, "ndcg@10", n_resamples=200, seed=v.seed)
    assert again.ci == v.ci
    assert again.p_value == v.p_value


def test_spec_defaults_and_provenance(noisy: tuple[FloatArray, FloatArray]) -> None:
    a, b = pair(*noisy)
    v = paired_bootstrap(a, b, "ndcg@10")
    assert isinstance(v, BootstrapResult)
    assert (v.metric, v.name_a, v.name_b) == ("ndcg@10", "cand", "base")
    assert (v.n_queries, v.n_resamples, v.seed) == (120, 10_000, 42)
    assert v.stream == RESAMPLING_STREAM
    assert v.confidence == 0.95
    assert v.method == "bootstrap"
    assert v.value_a == a.mean("ndcg@10")
    assert v.value_b == b.mean("ndcg@10")
    with pytest.raises(AttributeError):
        v.observed = 1.0  # type: ignore[misc]
    assert v.to_dict()["confidence"] == 0.95


def test_alpha_sets_the_interval_and_the_decision(noisy: tuple[FloatArray, FloatArray]) -> None:
    a, b = pair(*noisy)
    wide = paired_bootstrap(a, b, "ndcg@10", n_resamples=B, alpha=0.01)
    narrow = paired_bootstrap(a, b, "ndcg@10", n_resamples=B, alpha=0.2)
    assert wide.ci_low < narrow.ci_low < narrow.ci_high < wide.ci_high
    assert narrow.confidence == pytest.approx(0.8)
    for v in (wide, narrow):
        assert v.significant == (v.ci_low > 0 or v.ci_high < 0)
    assert narrow.p_value == wide.p_value  # the p-value does not depend on the level


def test_direction_follows_the_interval() -> None:
    rng = np.random.default_rng(5)
    base = rng.uniform(0.3, 0.7, 80)
    up = paired_bootstrap(*pair(base + 0.1, base), "ndcg@10", n_resamples=300)
    down = paired_bootstrap(*pair(base - 0.1, base), "ndcg@10", n_resamples=300)
    flat = paired_bootstrap(*pair(base, base), "ndcg@10", n_resamples=300)
    assert (up.direction, down.direction, flat.direction) == (1, -1, 0)


def test_case_results_flow_through_unchanged() -> None:
    def rows(values: Sequence[float]) -> list[CaseResult]:
        return [
            CaseResult(f"c{i}", TargetResponse(["d1"]), {"recall@1": v})
            for i, v in enumerate(values)
        ]

    a = [1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0]
    b = [0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0]
    as_rows = paired_bootstrap(rows(a), rows(b), "recall@1", n_resamples=500)
    as_runs = paired_bootstrap(
        RunResult("a", rows(a)), RunResult("b", rows(b)), "recall@1", n_resamples=500
    )
    assert as_rows.observed == pytest.approx(3 / 8)
    assert (as_rows.ci, as_rows.p_value) == (as_runs.ci, as_runs.p_value)
    assert (as_rows.name_a, as_rows.name_b) == ("a", "b")


# ---------------------------------------------------------------- reproducibility pins


def test_the_stream_is_pinned() -> None:
    """A numpy release that changed these draws would silently move every p-value."""
    assert RESAMPLING_STREAM == "evalkit-resample/2"
    assert substream(42, 1).integers(0, 1000, size=6, dtype=np.int64).tolist() == [
        74,
        467,
        182,
        46,
        656,
        595,
    ]
    flips = substream(42, 2).integers(0, 2, size=12, dtype=np.int64).tolist()
    assert flips == [1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0]
    assert substream(42, 1).multinomial(100, [0.2, 0.3, 0.5], size=2).tolist() == [
        [20, 23, 57],
        [21, 24, 55],
    ]


def test_results_are_pinned_bit_for_bit() -> None:
    discrete = np.array([0.3, -0.1, 0.25, 0.0, 0.5, -0.2, 0.1, 0.4, -0.05, 0.15] * 3)
    v = compare_metrics({"m": discrete}, n_resamples=2000, seed=42)["m"]
    assert v.resampling == "multinomial"
    assert (v.ci_low, v.ci_high, v.p_value) == (
        0.06000000000000001,
        0.20666666666666667,
        0.0009995002498750624,
    )
    continuous = np.linspace(-1.0, 1.3, 100) ** 3
    w = compare_metrics({"m": continuous}, n_resamples=2000, seed=42)["m"]
    assert w.resampling == "indices"
    assert (w.ci_low, w.ci_high, w.p_value) == GOLDEN_CONTINUOUS


GOLDEN_CONTINUOUS = (0.08160312120310037, 0.33966495616196596, 0.0014992503748125937)


@pytest.mark.parametrize("budget", [64, 1000, 10**6, 10**8])
def test_chunking_never_changes_a_draw(budget: int) -> None:
    rng = np.random.default_rng(8)
    fixed = to_fixed(rng.normal(size=(257, 2)))
    reference = engine.bootstrap_draws(fixed, [], 300, substream(1, 1), 10**9)
    chunked = engine.bootstrap_draws(fixed, [], 300, substream(1, 1), budget)
    assert np.array_equal(reference.sums, chunked.sums)


def test_gathering_and_counting_give_identical_sums(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(9)
    fixed = to_fixed(rng.normal(size=(301, 6)) * rng.uniform(0.01, 100, 6))
    monkeypatch.setattr(engine, "GATHER_MAX_METRICS", 0)
    counted = engine.bootstrap_draws(fixed, [], 200, substream(3, 1), 10**6)
    monkeypatch.setattr(engine, "GATHER_MAX_METRICS", 100)
    gathered = engine.bootstrap_draws(fixed, [], 200, substream(3, 1), 10**6)
    assert np.array_equal(counted.sums, gathered.sums)


def test_one_metric_alone_equals_that_metric_among_many(
    noisy: tuple[FloatArray, FloatArray],
) -> None:
    rng = np.random.default_rng(10)
    diffs = {f"m{j}": rng.normal(0.02 * j, 1, 150) for j in range(6)}
    together = compare_metrics(diffs, n_resamples=500)
    for name, d in diffs.items():
        alone = compare_metrics({name: d}, n_resamples=500)[name]
        assert (alone.ci, alone.p_value) == (together[name].ci, together[name].p_value)


def test_fixed_point_rounding_is_negligible_and_exact_on_coarse_grids() -> None:
    rng = np.random.default_rng(11)
    values = np.column_stack([rng.normal(size=1000), rng.integers(-3, 4, 1000) / 4])
    fixed = to_fixed(values)
    back = fixed.by_metric.T / fixed.denominator
    assert np.max(np.abs(back[:, 0] - values[:, 0])) <= np.max(np.abs(values[:, 0])) * 1e-12
    assert np.array_equal(back[:, 1], values[:, 1])
    assert np.all(np.abs(fixed.by_metric).sum(axis=1) < 2**53)


# ---------------------------------------------------------------- fast paths


@pytest.mark.slow  # a simulation: 2 x 20,000 resamples compared in distribution
def test_multinomial_path_matches_case_resampling_in_distribution(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(12)
    d = rng.choice([-1.0, 0.0, 0.0, 1.0, 1.0], size=90)
    fixed = to_fixed(d[:, None])
    fast = engine.bootstrap_draws(fixed, [], 20_000, substream(1, 1), 10**7)
    monkeypatch.setattr(engine, "discrete_limit", lambda n: 0)
    slow = engine.bootstrap_draws(fixed, [], 20_000, substream(2, 1), 10**7)
    assert (fast.paths, slow.paths) == (("multinomial",), ("indices",))
    # resampled sums of a {-1, 0, 1} variable: integers; compare their frequencies
    values = np.union1d(fast.sums[:, 0], slow.sums[:, 0])
    table = np.array([[np.count_nonzero(x.sums[:, 0] == v) for v in values] for x in (fast, slow)])
    table = table[:, table.sum(axis=0) >= 10]
    from scipy import stats as sps  # type: ignore[import-untyped]  # dev-only, no stubs

    chi2 = sps.chi2_contingency(table)
    assert chi2.pvalue > 0.001
    # and both match the theory: mean n * mean(d), variance n * var(d)
    for x in (fast, slow):
        sums = x.sums[:, 0] / fixed.denominator[0]
        assert sums.mean() == pytest.approx(d.sum(), abs=4 * math.sqrt(90 * d.var() / 20_000))
        assert sums.var() == pytest.approx(90 * d.var(), rel=0.05)


def test_grouping_finds_every_tuple_in_the_order_of_its_first_case() -> None:
    rng = np.random.default_rng(22)
    by_metric = np.vstack([rng.integers(-2, 3, 500), rng.integers(0, 4, 500), -np.zeros(500)])
    hashed = engine.distinct_rows(by_metric.astype(np.float64), 1000)
    assert hashed is not None
    for value, count in zip(hashed.values, hashed.counts, strict=True):
        assert count == np.count_nonzero((value == by_metric.T).all(axis=1))
    assert hashed.values.shape == (20, 3)  # 5 x 4 tuples, in the order of their first case
    first = [int(np.flatnonzero((v == by_metric.T).all(axis=1))[0]) for v in hashed.values]
    assert first == sorted(first)
    assert engine.distinct_rows(by_metric.astype(np.float64), 19) is None


def test_discrete_metrics_take_the_multinomial_path_through_the_api() -> None:
    rng = np.random.default_rng(13)
    a, b = pair(
        rng.integers(0, 2, 400).astype(float), rng.integers(0, 2, 400).astype(float), "recall@1"
    )
    v = paired_bootstrap(a, b, "recall@1", n_resamples=B)
    assert v.resampling == "multinomial"
    low, high, _p = naive_bootstrap(
        np.array(list(a.values("recall@1").values()))
        - np.array(list(b.values("recall@1").values())),
        B,
        42,
    )
    assert v.ci_low == pytest.approx(low, abs=0.02)
    assert v.ci_high == pytest.approx(high, abs=0.02)


# ---------------------------------------------------------------- aggregates


def test_latency_percentile_fast_path_equals_nearest_rank() -> None:
    rng = np.random.default_rng(14)
    la, lb = rng.exponential(100, 37).round(), rng.exponential(120, 37).round()
    aggregate = NearestRankAggregate("latency_p95", 95, la, lb)
    positions = np.random.default_rng(15).integers(0, 37, size=(50, 37))
    fast = aggregate.bootstrap(positions)
    for r, row in enumerate(positions):
        slow = nearest_rank(la[row].tolist(), 95) - nearest_rank(lb[row].tolist(), 95)
        assert fast[r] == slow
    flips = np.random.default_rng(16).integers(0, 2, size=(50, 37))
    swapped = aggregate.swapped(flips)
    for r, row in enumerate(flips.astype(bool)):
        side_a = np.where(row, lb, la).tolist()
        side_b = np.where(row, la, lb).tolist()
        assert swapped[r] == nearest_rank(side_a, 95) - nearest_rank(side_b, 95)


def item_run(name: str, rankings: Sequence[Sequence[str]]) -> RunResult[CaseResult]:
    rows = [CaseResult(f"c{i:03d}", TargetResponse(list(r))) for i, r in enumerate(rankings)]
    return RunResult(name, rows)


def random_rankings(seed: int, n: int, catalogue: int) -> list[list[str]]:
    rng = random.Random(seed)
    return [[f"d{rng.randrange(catalogue)}" for _ in range(rng.randrange(0, 6))] for _ in range(n)]


@pytest.mark.parametrize("metric", ["max_item_share", "max_item_share@3", "entropy"])
def test_item_aggregates_fast_path_equals_the_builtins(metric: str) -> None:
    from evalkit._model.registry import get_metric
    from evalkit.stats.pairing import metric_data, pair_runs

    a, b = item_run("a", random_rankings(1, 40, 12)), item_run("b", random_rankings(2, 40, 9))
    fast = metric_data(pair_runs(a, b), metric)
    assert isinstance(fast, ItemCountAggregate)
    fn = get_metric(metric).fn
    positions = np.random.default_rng(3).integers(0, 40, size=(30, 40))
    for r, delta in enumerate(fast.bootstrap(positions)):
        rows = positions[r].tolist()
        slow = fn([a.per_query[i] for i in rows]) - fn([b.per_query[i] for i in rows])
        assert delta == pytest.approx(slow, abs=1e-12)
    flips = np.random.default_rng(4).integers(0, 2, size=(30, 40))
    for r, delta in enumerate(fast.swapped(flips)):
        pairs = list(zip(a.per_query, b.per_query, strict=True))
        side_a = [y if f else x for (x, y), f in zip(pairs, flips[r], strict=True)]
        side_b = [x if f else y for (x, y), f in zip(pairs, flips[r], strict=True)]
        assert delta == pytest.approx(fn(side_a) - fn(side_b), abs=1e-12)


def test_item_aggregates_with_a_failed_case_take_the_generic_path() -> None:
    rows = [CaseResult(f"c{i:03d}", TargetResponse([f"d{i % 3}"])) for i in range(30)]
    failed = [*rows[:-1], CaseResult("c029", None, error="timeout")]
    a, b = RunResult("a", rows), RunResult("b", failed)
    v = paired_bootstrap(a, b, "entropy", 200)
    assert v.observed == a.aggregate("entropy") - b.aggregate("entropy")
    assert v.ci_low <= v.observed <= v.ci_high


def test_latency_p95_compares_by_recomputing_on_both_sides() -> None:
    rng = np.random.default_rng(17)
    base = rng.exponential(100, 200)
    slow = latency_run("slow", base * 1.5 + 20)
    fast = latency_run("fast", base)
    v = paired_bootstrap(slow, fast, "latency_p95", n_resamples=B)
    assert v.kind == "aggregate"
    assert v.observed == slow.aggregate("latency_p95") - fast.aggregate("latency_p95")
    assert v.significant
    assert v.ci_low > 0
    assert v.wins is None
    assert v.sd_diff is None
    same = paired_bootstrap(fast, fast, "latency_p95", n_resamples=300)
    assert (same.observed, same.p_value, same.significant) == (0.0, 1.0, False)


def test_latency_mean_is_the_mean_of_per_case_latency_differences() -> None:
    rng = np.random.default_rng(18)
    la, lb = rng.exponential(100, 90), rng.exponential(100, 90)
    v = paired_bootstrap(latency_run("a", la), latency_run("b", lb), "latency_mean", B)
    d = compare_metrics({"latency_mean": la - lb}, n_resamples=B)["latency_mean"]
    assert v.kind == "aggregate"
    # the interval is anchored at each path's observed Δ (mean(a) - mean(b) vs mean(a - b))
    assert v.ci == pytest.approx(d.ci, abs=1e-12)
    assert v.p_value == d.p_value
    assert v.observed == pytest.approx(la.mean() - lb.mean(), abs=1e-9)


def test_a_client_aggregate_takes_the_generic_path() -> None:
    @register_aggregate("cost_per_query", higher_is_better=False)
    def cost_per_query(rows: Sequence[Row]) -> float:
        total = 0.0
        for row in rows:
            assert row.response is not None
            total += float(row.response.meta["cost_usd"])
        return total / len(rows)

    def run(name: str, costs: FloatArray) -> RunResult[CaseResult]:
        rows = [
            CaseResult(f"c{i:03d}", TargetResponse(["x"], meta={"cost_usd": c}))
            for i, c in enumerate(costs)
        ]
        return RunResult(name, rows)

    rng = np.random.default_rng(19)
    cb = rng.uniform(0.001, 0.01, 90)  # > 64 distinct differences: both take the index path
    ca = cb + rng.normal(0.002, 0.001, 90)
    v = paired_bootstrap(run("a", ca), run("b", cb), "cost_per_query", n_resamples=300)
    d = compare_metrics({"c": ca - cb}, n_resamples=300)["c"]
    # a mean-valued aggregate resampled generically equals the per-case path
    assert v.ci_low == pytest.approx(d.ci_low, rel=1e-9)
    assert v.ci_high == pytest.approx(d.ci_high, rel=1e-9)
    assert v.significant


# ---------------------------------------------------------------- many metrics


def test_many_metrics_share_one_pass_and_keep_their_order(
    noisy: tuple[FloatArray, FloatArray],
) -> None:
    rng = np.random.default_rng(20)
    a = make_run("a", {"x": noisy[0], "y": rng.uniform(size=120), "z": noisy[0] * 2})
    b = make_run("b", {"x": noisy[1], "y": rng.uniform(size=120), "z": noisy[1] * 2})
    c = paired_bootstrap_many(a, b, ["z", "x", "y"], n_resamples=B)
    assert c.metrics == ["z", "x", "y"]
    assert c["z"].p_value == c["x"].p_value  # z = 2x: the same resamples, the same tail
    assert c["z"].ci_low == pytest.approx(2 * c["x"].ci_low, rel=1e-12)
    assert c.false_alarm_chance == pytest.approx(1 - 0.95**3)
    assert c.to_dict()["n_tests"] == 3
    with pytest.raises(MetricError, match=r"'w' is not part of this comparison \(compared: z, x"):
        c["w"]


# ---------------------------------------------------------------- warnings


def test_small_samples_and_skew_are_flagged() -> None:
    rng = np.random.default_rng(21)
    small = compare_metrics({"m": rng.normal(size=30)}, n_resamples=200)["m"]
    assert [w.code for w in small.warnings] == ["small_n"]
    assert "method 'auto' or 't'" in small.warnings[0].message
    big = compare_metrics({"m": rng.normal(size=200)}, n_resamples=200)["m"]
    assert big.warnings == ()
    perm = compare_metrics({"m": rng.normal(size=30)}, n_resamples=200, method="permutation")
    assert perm["m"].warnings == ()
    skewed = compare_metrics({"m": rng.exponential(size=200) - 1}, n_resamples=200)["m"]
    assert [w.code for w in skewed.warnings] == ["skewed"]
    assert "skewness +" in skewed.warnings[0].message


# ---------------------------------------------------------------- calibration


@pytest.mark.slow  # a simulation: 2,000 null data sets
def test_false_positive_rate_under_a_true_null_is_near_nominal() -> None:
    """n = 100, 2,000 trials, B = 200: the spec's rule must hold its 5% level."""
    rng = np.random.default_rng(2024)
    trials, hits = 2000, 0
    for t in range(trials):
        d = rng.normal(0.0, 0.2, 100)
        v = compare_metrics({"m": d}, n_resamples=200, seed=t)["m"]
        hits += v.significant
    rate = hits / trials
    print(f"\nfalse-positive rate under a true null (n=100, B=200): {rate:.3f}")
    assert 0.03 <= rate <= 0.09


# ---------------------------------------------------------------- errors


def test_empty_runs_are_refused() -> None:
    full = make_run("full", {"m": [1.0, 0.0]})
    with pytest.raises(ComparisonError, match=r"run 'empty' has no rows"):
        paired_bootstrap(RunResult("empty", []), full, "m")
    with pytest.raises(ComparisonError, match=r"run 'empty' has no rows"):
        paired_bootstrap(full, RunResult("empty", []), "m")


def test_different_case_sets_name_ids_from_each_side() -> None:
    a = make_run("cand", {"m": [1.0] * 4}, ids=["q1", "q2", "q3", "q9"])
    b = make_run("base", {"m": [1.0] * 4}, ids=["q1", "q2", "q3", "q4"])
    with pytest.raises(ComparisonError) as err:
        paired_bootstrap(a, b, "m")
    message = str(err.value)
    assert "1 only in 'cand': q9" in message
    assert "1 only in 'base': q4" in message
    assert "\n" not in message


def test_many_missing_ids_are_abbreviated() -> None:
    a = make_run("cand", {"m": [1.0] * 10}, ids=[f"a{i}" for i in range(10)])
    b = make_run("base", {"m": [1.0] * 10}, ids=[f"b{i}" for i in range(10)])
    with pytest.raises(ComparisonError, match=r"10 only in 'cand': a0, a1, a2, a3, a4 \(\+5 more"):
        paired_bootstrap(a, b, "m")


def test_a_single_shared_case_is_refused() -> None:
    a, b = make_run("a", {"m": [1.0]}, ids=["only"]), make_run("b", {"m": [0.0]}, ids=["only"])
    with pytest.raises(ComparisonError, match=r"share only 1 case \(only\)"):
        paired_bootstrap(a, b, "m")


def test_duplicate_case_ids_are_refused() -> None:
    a = make_run("cand", {"m": [1.0, 0.0, 1.0]}, ids=["q1", "q2", "q1"])
    b = make_run("base", {"m": [1.0, 0.0, 1.0]}, ids=["q1", "q2", "q3"])
    with pytest.raises(ComparisonError, match=r"run 'cand': case id 'q1' appears more than once"):
        paired_bootstrap(a, b, "m")


def test_a_metric_computed_on_neither_side_lists_what_was() -> None:
    a, b = pair([1.0, 0.0], [0.0, 1.0], metric="recall@10")
    with pytest.raises(MetricError, match=r"'ndcg@10' was not computed for run 'cand' "):
        paired_bootstrap(a, b, "ndcg@10")
    with pytest.raises(MetricError, match=r"\(computed: recall@10\)"):
        paired_bootstrap(a, b, "made_up_metric")


def test_a_metric_computed_on_one_side_only_names_that_side() -> None:
    a = make_run("cand", {"ndcg@10": [1.0, 0.0]})
    b = make_run("base", {"recall@10": [0.0, 1.0]})
    with pytest.raises(MetricError, match=r"not computed for run 'base' \(computed: recall@10\)"):
        paired_bootstrap(a, b, "ndcg@10")


def test_a_metric_missing_on_some_cases_names_them() -> None:
    a = make_run("cand", {"m": [1.0, 0.0, 1.0, 1.0]})
    rows = [
        CaseResult("q000", TargetResponse(["x"]), {"m": 1.0}),
        CaseResult("q001", None, {}, error="timeout"),
        CaseResult("q002", TargetResponse(["x"]), {"m": 0.0}),
        CaseResult("q003", None, {}, error="HTTP 500"),
    ]
    with pytest.raises(
        MetricError, match=r"run 'base': metric 'm' is missing on 2 of 4 case\(s\): q001, q003"
    ):
        paired_bootstrap(a, RunResult("base", rows), "m")


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_values_name_the_case(bad: float) -> None:
    a = make_run("cand", {"m": [1.0, bad, 0.0]})
    b = make_run("base", {"m": [1.0, 1.0, 0.0]})
    with pytest.raises(MetricError, match=rf"run 'cand': metric 'm' is {bad} on case 'q001'"):
        paired_bootstrap(a, b, "m")


def test_a_value_that_is_not_a_number_names_the_case() -> None:
    a = make_run("cand", {"m": [1.0, 0.0]})
    text: dict[str, float] = {"m": "0.5"}  # type: ignore[dict-item]
    b = RunResult("base", [QueryResult("q000", [], {"m": 1.0}), QueryResult("q001", [], text)])
    with pytest.raises(
        MetricError, match=r"metric 'm' on case 'q001' is '0.5' \(str\), not a number"
    ):
        paired_bootstrap(a, b, "m")


@pytest.mark.parametrize("n_resamples", [0, -5, 1.5, True, "100"])
def test_n_resamples_must_be_a_positive_integer(n_resamples: object) -> None:
    a, b = pair([1.0, 0.0], [0.0, 1.0])
    with pytest.raises(
        InputError, match=rf"n_resamples must be a positive integer, got {n_resamples!r}"
    ):
        paired_bootstrap(a, b, "ndcg@10", n_resamples=n_resamples)  # type: ignore[arg-type]


def test_one_resample_is_allowed() -> None:
    a, b = pair([1.0, 0.0, 0.5], [0.0, 1.0, 0.25])
    v = paired_bootstrap(a, b, "ndcg@10", n_resamples=1)
    assert v.n_resamples == 1
    assert v.ci_low == v.ci_high


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"alpha": 0.0}, r"alpha must lie strictly between 0 and 1 .* got 0.0"),
        ({"alpha": 1}, r"alpha must lie strictly between 0 and 1 .* got 1"),
        (
            {"method": "wilcoxon"},
            r"unknown method 'wilcoxon': use one of bootstrap, permutation, t",
        ),
        ({"seed": -1}, r"seed must be a non-negative integer or a numpy Generator, got -1"),
        ({"seed": "42"}, r"seed must be a non-negative integer .* got '42'"),
        ({"chunk_bytes": 0}, r"chunk_bytes must be a positive integer, got 0"),
    ],
)
def test_bad_settings_are_named(kwargs: dict[str, object], message: str) -> None:
    a, b = pair([1.0, 0.0], [0.0, 1.0])
    with pytest.raises(InputError, match=message):
        paired_bootstrap(a, b, "ndcg@10", **kwargs)  # type: ignore[arg-type]


def test_bad_corrections_are_named() -> None:
    a, b = pair([1.0, 0.0], [0.0, 1.0])
    with pytest.raises(
        InputError, match=r"unknown correction 'bonferroni': use one of none, holm, maxt"
    ):
        paired_bootstrap_many(a, b, ["ndcg@10"], correction="bonferroni")
    with pytest.raises(
        InputError, match=r"correction 'maxt' needs a resampled null and method 't'"
    ):
        paired_bootstrap_many(a, b, ["ndcg@10"], method="t", correction="maxt")


@pytest.mark.parametrize(
    ("metrics", "message"),
    [
        ("ndcg@10", r"metrics must be a list of metric names, got 'ndcg@10'"),
        ([], r"no metrics to compare"),
        (["ndcg@10", "ndcg@10"], r"metric\(s\) named more than once: ndcg@10"),
        ([""], r"metric names must be non-empty strings, got ''"),
    ],
)
def test_bad_metric_lists_are_named(metrics: object, message: str) -> None:
    a, b = pair([1.0, 0.0], [0.0, 1.0])
    with pytest.raises(MetricError, match=message):
        paired_bootstrap_many(a, b, metrics)  # type: ignore[arg-type]


def test_something_that_is_not_a_run_is_refused() -> None:
    a, _ = pair([1.0, 0.0], [0.0, 1.0])
    with pytest.raises(
        ComparisonError, match=r"expected a RunResult or a sequence of rows .* got int"
    ):
        paired_bootstrap(a, 3, "ndcg@10")  # type: ignore[arg-type]


def test_an_aggregate_that_goes_non_finite_is_named() -> None:
    @register_aggregate("broken_ratio", higher_is_better=True)
    def broken_ratio(rows: Sequence[Row]) -> float:
        return math.nan if len({r.query_id for r in rows}) < len(rows) else 1.0

    a = latency_run("a", [1.0, 2.0, 3.0])
    with pytest.raises(MetricError, match=r"aggregate 'broken_ratio' is nan on a resample"):
        paired_bootstrap(a, latency_run("b", [1.0, 2.0, 3.0]), "broken_ratio", n_resamples=50)


def test_the_t_test_refuses_aggregates() -> None:
    a, b = latency_run("a", [1.0, 2.0, 3.0]), latency_run("b", [2.0, 2.0, 3.0])
    with pytest.raises(MetricError, match=r"aggregate 'latency_p95' has no per-case values"):
        paired_bootstrap(a, b, "latency_p95", method="t")


@pytest.mark.parametrize(
    ("diffs", "message"),
    [
        ({}, r"diffs must be a non-empty mapping"),
        ({"m": [[1.0, 2.0]]}, r"differences for 'm' must be one-dimensional"),
        ({"m": [1.0, 2.0], "k": [1.0]}, r"differences for 'k' cover 1 cases, the others 2"),
        ({"m": [1.0, math.nan, 2.0]}, r"differences for 'm' are non-finite at position\(s\) 1"),
        ({"m": [1.0]}, r"need at least 2 paired cases to compare, got 1"),
    ],
)
def test_compare_metrics_refuses_bad_arrays(diffs: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=message):
        compare_metrics(diffs)  # type: ignore[arg-type]
