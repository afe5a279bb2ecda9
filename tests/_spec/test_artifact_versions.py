"""Run files outlive the release that wrote them: every earlier artefact schema is read
through explicit migration steps, from fixtures committed when that schema was current."""

from __future__ import annotations

import importlib
import json
import shutil
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from evalkit._model import registry
from evalkit._model.formats import ARTIFACT_SCHEMA_VERSION
from evalkit._model.registry import get_metric, register_metric
from evalkit._model.results import CaseResult, QueryResult
from evalkit._spec.artifact import (
    _MIGRATIONS,
    artifact_from_dict,
    read_artifact,
    vouch_schema1_fingerprints,
    write_artifact,
)
from evalkit.errors import ArtifactError
from helpers.cli import evalkit

FIXTURES = Path(__file__).parents[1] / "data" / "artifacts"
V1 = FIXTURES / "v1.json"
V1_RETRIEVAL = FIXTURES / "v1-retrieval.json"


@pytest.fixture
def v1_plugin() -> Iterator[None]:
    """The plugin v1.json's `first_hit` came from, registered as a config would import it."""
    with registry.isolated():
        sys.path.insert(0, str(FIXTURES))
        try:
            sys.modules.pop("v1_plugin", None)
            importlib.import_module("v1_plugin")
            yield
        finally:
            sys.path.remove(str(FIXTURES))
            sys.modules.pop("v1_plugin", None)


def stored_fingerprints(path: Path) -> dict[str, str]:
    doc = json.loads(path.read_text())
    return {name: info["fingerprint"] for name, info in doc["metrics"].items()}


def test_every_earlier_schema_has_a_migration_step_and_a_fixture() -> None:
    assert sorted(_MIGRATIONS) == list(range(1, ARTIFACT_SCHEMA_VERSION))
    for version in range(1, ARTIFACT_SCHEMA_VERSION):
        fixtures = sorted(FIXTURES.glob(f"v{version}*.json"))
        assert fixtures, f"no fixture of schema {version} in {FIXTURES}"
        for path in fixtures:
            assert json.loads(path.read_text())["schema_version"] == version


def test_a_schema_1_target_run_reads_in_full(v1_plugin: None) -> None:
    art = read_artifact(V1)
    assert art.read_schema_version == 1
    assert art.path == "target"
    assert art.name == "fixture-ranker"
    assert art.result.ids() == ["a", "b", "c", "d"]
    assert [r.case_id for r in art.failed] == ["d"]
    rows = {r.case_id: r for r in art.result.per_query}
    assert isinstance(rows["a"], CaseResult)
    assert rows["a"].metrics == {"recall@1": 1.0, "ndcg@10": 1.0, "first_hit": 1.0}
    assert rows["b"].metrics["recall@1"] == 0.0
    assert set(art.metrics) == {"recall@1", "ndcg@10", "first_hit", "latency_p95"}
    assert art.metrics["latency_p95"].kind == "aggregate"
    assert art.goldens is not None
    assert set(art.goldens.cases) == {"a", "b", "c", "d"}
    assert (art.seed, art.config_name, art.git_commit) == (42, "fixture", "0" * 40)
    assert art.config_fingerprint == "c" * 64


def test_schema_1_fingerprints_of_unchanged_metrics_equal_todays(v1_plugin: None) -> None:
    # first_hit's schema-1 fingerprint hashed its source text; it is still that text,
    # so the migration vouches for it and a gate against this baseline stays comparable.
    stored = stored_fingerprints(V1)
    art = read_artifact(V1)
    for name in ("recall@1", "ndcg@10", "first_hit", "latency_p95"):
        assert art.metrics[name].fingerprint == get_metric(name).fingerprint, name
    assert stored["first_hit"] != get_metric("first_hit").fingerprint  # it really changed
    for name in ("recall@1", "ndcg@10", "latency_p95"):  # built-ins: the same in both schemas
        assert stored[name] == get_metric(name).fingerprint


def test_a_schema_1_fingerprint_of_another_definition_is_kept_as_written() -> None:
    stored = stored_fingerprints(V1)
    with registry.isolated():

        @register_metric("first_hit", higher_is_better=True)
        def first_hit(response: object, case: object) -> float:  # not the fixture's code
            return 0.0

        art = read_artifact(V1)
        assert art.metrics["first_hit"].fingerprint == stored["first_hit"]
        assert art.metrics["first_hit"].fingerprint != get_metric("first_hit").fingerprint


def test_a_schema_1_fingerprint_of_an_unregistered_metric_is_kept_as_written() -> None:
    with registry.isolated():
        assert "first_hit" not in registry.registered()
        assert (
            read_artifact(V1).metrics["first_hit"].fingerprint
            == stored_fingerprints(V1)["first_hit"]
        )


def test_a_schema_1_baseline_read_before_its_plugin_is_vouched_for_once_it_is_imported(
    v1_plugin: None,
) -> None:
    with registry.isolated():  # as the gate does: the baseline is read before plugins load
        registry._case.pop("first_hit")
        early = read_artifact(V1)
    assert early.metrics["first_hit"].fingerprint == stored_fingerprints(V1)["first_hit"]
    vouched = vouch_schema1_fingerprints(early)
    assert vouched.metrics["first_hit"].fingerprint == get_metric("first_hit").fingerprint
    assert vouch_schema1_fingerprints(vouched) == vouched
    current = read_artifact(V1_RETRIEVAL)
    assert vouch_schema1_fingerprints(replace(current, read_schema_version=2)).metrics == (
        current.metrics
    )


def test_a_schema_1_retrieval_run_reads_in_full() -> None:
    art = read_artifact(V1_RETRIEVAL)
    assert art.read_schema_version == 1
    assert art.path == "retrieval"
    assert art.result.ids() == ["q1", "q2", "q3"]
    first = art.result.per_query[0]
    assert isinstance(first, QueryResult)
    assert first.retrieved == ["d2", "d1", "d3"]
    assert art.result.mean("recall@10") == pytest.approx(2 / 3)


@pytest.mark.parametrize("fixture", [V1, V1_RETRIEVAL], ids=["target", "retrieval"])
def test_an_old_schema_is_rewritten_as_the_current_one(
    fixture: Path, tmp_path: Path, v1_plugin: None
) -> None:
    old = read_artifact(fixture)
    path = write_artifact(old, tmp_path / "again.json")
    doc = json.loads(path.read_text())
    assert doc["schema_version"] == ARTIFACT_SCHEMA_VERSION
    again = read_artifact(path)
    assert again.read_schema_version == ARTIFACT_SCHEMA_VERSION
    assert again.result.per_query == old.result.per_query
    assert again.metrics == old.metrics


def test_migration_leaves_the_document_it_was_given_alone(v1_plugin: None) -> None:
    doc = json.loads(V1.read_text())
    before = json.dumps(doc, sort_keys=True)
    artifact_from_dict(doc, where="v1")
    assert json.dumps(doc, sort_keys=True) == before


@pytest.mark.parametrize(
    ("version", "message"),
    [
        (
            ARTIFACT_SCHEMA_VERSION + 1,
            f"schema_version {ARTIFACT_SCHEMA_VERSION + 1} was written by a newer evalkit",
        ),
        (0, "schema_version 0 is not a schema version"),
        ("1", "schema_version '1' is not a schema version"),
        (True, "schema_version True is not a schema version"),
    ],
)
def test_unknown_schema_versions_are_refused(version: object, message: str) -> None:
    doc = json.loads(V1.read_text())
    doc["schema_version"] = version
    with pytest.raises(ArtifactError, match=f"^x.json: artefact {message}"):
        artifact_from_dict(doc, where="x.json")


# --- through the CLI --------------------------------------------------------------------


def test_show_states_the_schema_version_it_read(tmp_path: Path) -> None:
    shown = evalkit("show", V1, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[0] == (
        f"{V1}: artefact schema_version 1 (read through migration to {ARTIFACT_SCHEMA_VERSION})"
    )
    assert "fixture-ranker" in shown.stdout
    shutil.copy(V1_RETRIEVAL, tmp_path / "old.json")
    art = read_artifact(tmp_path / "old.json")
    write_artifact(art, tmp_path / "new.json")
    shown = evalkit("show", "new.json", cwd=tmp_path)
    assert shown.returncode == 0
    assert (
        shown.stdout.splitlines()[0]
        == f"new.json: artefact schema_version {ARTIFACT_SCHEMA_VERSION} (current)"
    )
