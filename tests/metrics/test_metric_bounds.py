"""Every metric's declared range (issue #48): built-ins declare one, clients may.

The ranges are tested as invariants: every built-in per-case metric, scored on
generated rankings and answers, lands inside the range it declares; a client
metric's ``bounds=`` stops a run that leaves it; no ``bounds=`` checks nothing.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from evalkit import (
    CallableTarget,
    GoldenCase,
    MetricError,
    RegistryError,
    TargetResponse,
    register_aggregate,
    register_metric,
    registered,
    registry,
)
from evalkit._model.results import CaseResult, RunResult
from evalkit._spec.artifact import build_artifact, read_artifact, write_artifact
from evalkit.errors import ArtifactError
from evalkit.execute import evaluate
from evalkit.goldens import GoldenSet

FAMILIES = ("recall", "ndcg", "precision", "mrr", "map", "hit_rate")


def builtin_names() -> list[str]:
    """What evalkit registers itself (not what other tests in this process left behind)."""
    from evalkit.metrics.builtin import register_builtins

    with registry.isolated():
        registry._reset_for_tests()
        register_builtins()
        return list(registered())


def test_every_builtin_declares_a_range() -> None:
    names = [*builtin_names(), *(f"{family}@7" for family in FAMILIES)]
    assert len(names) > 20
    undeclared = [name for name in names if registry.get_metric(name).bounds is None]
    assert undeclared == []
    assert registry.get_metric("recall@1").bounds == (0.0, 1.0)
    assert registry.get_metric("latency_p95").bounds == (0.0, math.inf)
    assert registry.get_metric("answer_length").bounds == (0.0, math.inf)


def _random_case(rng: random.Random, index: int) -> tuple[GoldenCase, TargetResponse]:
    docs = [f"d{i}" for i in range(12)]
    grades = {d: rng.randint(1, 3) for d in rng.sample(docs, rng.randint(1, 6))}
    ranking = rng.sample(docs, rng.randint(0, 12))
    words = " ".join(rng.choice(["paris", "is", "the", "capital", "{", "}"]) for _ in range(5))
    case = GoldenCase(f"c{index}", "q", grades=grades, expected="paris is the capital")
    return case, TargetResponse(ranked_ids=ranking, text=words)


def test_every_builtin_case_metric_stays_inside_its_range_on_generated_inputs() -> None:
    rng = random.Random(48)
    families = [f"{family}@{k}" for family in FAMILIES for k in (1, 4, 50)]
    names = [n for n in [*builtin_names(), *families] if registry.get_metric(n).kind == "case"]
    for index in range(300):
        case, response = _random_case(rng, index)
        for name in names:
            defn = registry.get_metric(name)
            try:
                value = defn(response, case)
            except MetricError:  # a metric that needs what this case lacks
                continue
            assert defn.admits(value), (name, value, case, response)


def test_a_client_metric_may_declare_bounds_and_the_020_signature_still_works() -> None:
    with registry.isolated():
        register_metric("plain_score", higher_is_better=True)(lambda r, c: 7.0)
        register_metric("share", higher_is_better=True, bounds=(0, 1))(lambda r, c: 0.5)
        register_metric("cost", higher_is_better=False, bounds=(0, None))(lambda r, c: 3.0)
        register_aggregate("spread", higher_is_better=True, bounds=(None, 10))(lambda rows: 1.0)
        assert registry.get_metric("plain_score").bounds is None
        assert registry.get_metric("share").bounds == (0.0, 1.0)
        assert registry.get_metric("cost").bounds == (0.0, math.inf)
        assert registry.get_metric("spread").bounds == (-math.inf, 10.0)


@pytest.mark.parametrize("bad", [(1, 0), (0,), "0-1", (0, math.nan), (True, 1), (0, "1")])
def test_malformed_bounds_are_refused_naming_the_metric(bad: object) -> None:
    with registry.isolated(), pytest.raises(RegistryError, match="'odd'.*bounds"):
        register_metric("odd", higher_is_better=True, bounds=bad)  # type: ignore[arg-type]


def _goldens() -> GoldenSet:
    return GoldenSet(
        [
            GoldenCase("a", "q", relevant=frozenset({"d1"})),
            GoldenCase("b", "q", relevant=frozenset({"d2"})),
        ]
    )


def test_a_run_stops_when_a_client_metric_leaves_its_declared_range() -> None:
    target = CallableTarget(lambda case: ["d1"], name="t")
    with registry.isolated():
        register_metric("capped", higher_is_better=True, bounds=(0, 1))(lambda r, c: 1.5)
        with pytest.raises(MetricError, match=r"'capped' returned 1.5 on case 'a'.*\[0, 1\]"):
            evaluate(target, _goldens(), metrics=["capped"])


def _artefact_with(tmp_path: Path, name: str, value: float) -> Path:
    rows = [CaseResult("a", TargetResponse(ranked_ids=["d1"]), {name: value})]
    art = build_artifact(RunResult("r", rows), [name])
    return write_artifact(art, tmp_path / "run.json")


def test_an_artefact_row_outside_a_client_metrics_declared_range_is_refused(
    tmp_path: Path,
) -> None:
    with registry.isolated():
        register_metric("capped", higher_is_better=True, bounds=(0, 1))(lambda r, c: 0.5)
        path = _artefact_with(tmp_path, "capped", 2.5)
        with pytest.raises(ArtifactError, match=r"run.json.*'a', metric 'capped' = 2.5.*\[0, 1\]"):
            read_artifact(path)


def test_a_client_metric_without_bounds_is_not_checked(tmp_path: Path) -> None:
    with registry.isolated():
        register_metric("free", higher_is_better=True)(lambda r, c: 0.5)
        path = _artefact_with(tmp_path, "free", 250.0)
        assert read_artifact(path).result.per_query[0].metrics == {"free": 250.0}


def test_a_range_is_held_only_to_the_definition_that_scored_the_row(tmp_path: Path) -> None:
    # Written under one definition, read where the name means another (another
    # fingerprint): the reader cannot know the first one's range, and the gate calls
    # the two incomparable anyway.
    with registry.isolated():
        register_metric("capped", higher_is_better=True)(lambda r, c: 0.5)
        path = _artefact_with(tmp_path, "capped", 2.5)
    with registry.isolated():
        register_metric("capped", higher_is_better=True, bounds=(0, 1))(lambda r, c: 0.25 + 0.25)
        assert read_artifact(path).result.per_query[0].metrics == {"capped": 2.5}
