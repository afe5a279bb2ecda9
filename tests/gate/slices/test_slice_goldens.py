"""Slices in the goldens (issue 28): declared in evalkit.yaml, checked at load, fingerprinted."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit._app.pipeline import goldens_info, prepare
from evalkit._model.golden_cases import GoldenCase, GoldenSet
from evalkit._model.results import QueryResult, RunResult
from evalkit._model.slices import SliceKey
from evalkit._spec.artifact import artifact_from_dict, artifact_to_dict, build_artifact
from evalkit._spec.config import load_config
from evalkit._spec.golden_loaders import load_goldens
from evalkit.errors import ArtifactError, ConfigError, GoldenError
from evalkit.gate.inputs import goldens_diff
from helpers.slice_runs import write_project

GOLDENS = (
    '{"id": "a", "query": "alpha", "relevant": ["d1"], "tags": ["billing", "long"], "lang": "de"}\n'
    '{"id": "b", "query": "beta", "relevant": ["d3"], "tags": ["billing"], "lang": "en"}\n'
    '{"id": "c", "query": "gamma", "relevant": ["d2"], "meta": {"topic": "auth"}}\n'
)
CHECKS = "checks:\n  - {id: floor, metric: recall@1, op: '>=', threshold: 0.0}\n"


def project(tmp_path: Path, slices: str, goldens: str = GOLDENS) -> Path:
    return write_project(tmp_path, goldens, CHECKS, slices)


def test_list_form_declares_dimensions_and_reads_values(tmp_path: Path) -> None:
    prepared = prepare(load_config(project(tmp_path, "slices: [tags, lang, meta.topic]")))
    assignment = prepared.goldens.slice_assignment()
    assert assignment is not None
    assert assignment.slices() == {
        SliceKey("tags", "billing"): ("a", "b"),
        SliceKey("tags", "long"): ("a",),
        SliceKey("lang", "de"): ("a",),
        SliceKey("lang", "en"): ("b",),
        SliceKey("meta.topic", "auth"): ("c",),
    }


def test_mapping_form_sets_fdr_settings(tmp_path: Path) -> None:
    config = load_config(
        project(tmp_path, "slices:\n  by: [lang]\n  fdr: 0.1\n  method: by\n  min_cases: 12")
    )
    s = config.model.slices
    assert (s.by, s.fdr, s.method, s.min_cases) == (["lang"], 0.1, "by", 12)
    assert load_config(project(tmp_path, "")).model.slices.by == []
    assert load_config(project(tmp_path, "")).model.slices.min_cases == 30


def test_unknown_dimension_names_config_line_and_suggests(tmp_path: Path) -> None:
    config = project(tmp_path, "slices: [tag]")
    with pytest.raises(ConfigError) as err:
        prepare(load_config(config))
    message = str(err.value)
    assert f"{config}:6:" in message
    assert "no case in" in message
    assert "'tag'" in message
    assert "did you mean 'tags'?" in message


@pytest.mark.parametrize(
    ("slices", "needle"),
    [
        ("slices: [query]", "defines a case"),
        ("slices: [lang, lang]", "more than once"),
        ("slices: {by: [lang], fdr: 1.5}", "slices.fdr"),
        ("slices: {by: [lang], min_cases: 1}", "slices.min_cases"),
        ("slices: {by: [lang], method: holm}", "slices.method"),
    ],
)
def test_bad_slice_settings_are_one_line_with_the_line(
    tmp_path: Path, slices: str, needle: str
) -> None:
    config = project(tmp_path, slices)
    with pytest.raises(ConfigError) as err:
        load_config(config)
    assert f"{config}:6" in str(err.value)
    assert needle in str(err.value)


def test_a_value_that_cannot_label_a_slice_names_the_case(tmp_path: Path) -> None:
    goldens = GOLDENS + '{"id": "d", "query": "delta", "relevant": ["d1"], "lang": 1.5}\n'
    with pytest.raises(GoldenError, match=r"case 'd': slice field 'lang' must be text"):
        prepare(load_config(project(tmp_path, "slices: [lang]", goldens)))


def test_slice_fields_stay_out_of_the_case_fingerprint(tmp_path: Path) -> None:
    """Tagging goldens that had no tags keeps every fingerprint a baseline recorded."""
    (tmp_path / "plain.jsonl").write_text(
        '{"id": "a", "query": "alpha", "relevant": ["d1"]}\n'
        '{"id": "b", "query": "beta", "relevant": ["d3"]}\n'
    )
    (tmp_path / "tagged.jsonl").write_text(
        '{"id": "a", "query": "alpha", "relevant": ["d1"], "tags": ["x"]}\n'
        '{"id": "b", "query": "beta", "relevant": ["d3"], "tags": ["y"]}\n'
    )
    plain = load_goldens(tmp_path / "plain.jsonl")
    tagged = load_goldens(tmp_path / "tagged.jsonl")
    assert plain.case_fingerprints() != tagged.case_fingerprints()  # undeclared: a field
    assert plain.case_fingerprints() == tagged.with_slices(["tags"]).case_fingerprints()
    # and the subsets the CLI filters and shards make keep the declaration
    assert tagged.with_slices(["tags"]).subset({"a"}).slice_dimensions == ("tags",)


def _artefact(goldens: GoldenSet, name: str = "run") -> object:
    rows = [QueryResult(c.id, [], {"recall@1": 1.0}) for c in goldens]
    return build_artifact(RunResult(name, rows), [], goldens=goldens_info(goldens))


def test_artefact_keeps_the_assignment_and_refuses_an_edited_one() -> None:
    goldens = GoldenSet(
        [
            GoldenCase("a", "qa", context={"tags": ["x", "y"]}),
            GoldenCase("b", "qb", context={"tags": "x"}),
        ]
    ).with_slices(["tags"])
    doc = artifact_to_dict(_artefact(goldens))  # type: ignore[arg-type]
    assert doc["goldens"]["slices"]["cases"] == {"a": {"tags": ["x", "y"]}, "b": {"tags": ["x"]}}
    back = artifact_from_dict(doc)
    assert back.goldens is not None
    assert back.goldens.slices == goldens.slice_assignment()
    doc["goldens"]["slices"]["cases"]["b"]["tags"] = ["y"]
    with pytest.raises(ArtifactError, match="does not match its fingerprint"):
        artifact_from_dict(doc)


def test_a_moved_case_shows_in_the_goldens_diff_and_still_pairs() -> None:
    before = GoldenSet(
        [
            GoldenCase("a", "qa", context={"lang": "de"}),
            GoldenCase("b", "qb", context={"lang": "en"}),
        ]
    ).with_slices(["lang"])
    after = GoldenSet(
        [
            GoldenCase("a", "qa", context={"lang": "en"}),
            GoldenCase("b", "qb", context={"lang": "en"}),
        ]
    ).with_slices(["lang"])
    diff = goldens_diff(_artefact(after), _artefact(before))  # type: ignore[arg-type]
    assert diff.reassigned == ("a",)
    assert diff.changed == ()
    # a baseline without an assignment (written before slices) pairs by case id
    old = _artefact(GoldenSet([GoldenCase("a", "qa"), GoldenCase("b", "qb")]))
    old_diff = goldens_diff(_artefact(after), old)  # type: ignore[arg-type]
    assert old_diff.changed == ()
    assert old_diff.reassigned == ()
    assert old_diff.empty
