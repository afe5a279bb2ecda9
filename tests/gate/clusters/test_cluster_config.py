"""Clusters declared in evalkit.yaml (issue 46): checked at load, recorded in the artefact."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit._app.pipeline import goldens_info, prepare
from evalkit._model.golden_cases import GoldenSet
from evalkit._model.results import QueryResult, RunResult
from evalkit._spec.artifact import artifact_from_dict, artifact_to_dict, build_artifact
from evalkit._spec.config import load_config
from evalkit.errors import ArtifactError, ConfigError, GoldenError
from evalkit.stats.clustered_decide import clustering_of
from helpers.cli import evalkit
from helpers.slice_runs import write_project

GOLDENS = (
    '{"id": "a", "query": "alpha", "relevant": ["d1"], "metadata": {"doc_id": "doc-1"}}\n'
    '{"id": "b", "query": "beta", "relevant": ["d3"], "metadata": {"doc_id": "doc-1"}}\n'
    '{"id": "c", "query": "gamma", "relevant": ["d2"], "metadata": {"doc_id": 7}}\n'
    '{"id": "d", "query": "delta", "relevant": ["d2"]}\n'
)
CHECKS = "checks:\n  - {id: floor, metric: recall@1, op: '>=', threshold: 0.0}\n"


def project(tmp_path: Path, line: str, goldens: str = GOLDENS) -> Path:
    return write_project(tmp_path, goldens, CHECKS, line)  # `line` is evalkit.yaml:6


def test_the_declared_field_assigns_every_case_a_cluster(tmp_path: Path) -> None:
    goldens = prepare(load_config(project(tmp_path, "clusters: metadata.doc_id"))).goldens
    assignment = goldens.cluster_assignment()
    assert assignment is not None
    assert assignment.field_name == "metadata.doc_id"
    assert dict(assignment.members) == {"a": "doc-1", "b": "doc-1", "c": "7", "d": None}
    everything = clustering_of(["a", "b", "c", "d"], assignment.members)
    assert (everything.count, everything.own) == (3, 1)  # doc-1, 7, and d on its own
    two = clustering_of(["a", "b"], assignment.members)
    assert (two.count, two.own) == (1, 0)
    # subsets (case filters, shards) keep the declaration
    assert goldens.subset({"a", "d"}).cluster_field == "metadata.doc_id"


def test_no_declaration_means_no_clusters(tmp_path: Path) -> None:
    assert prepare(load_config(project(tmp_path, ""))).goldens.cluster_assignment() is None


def test_a_field_no_case_carries_is_refused_naming_the_config_line(tmp_path: Path) -> None:
    config = project(tmp_path, "clusters: metadata.docid")
    with pytest.raises(ConfigError) as err:
        prepare(load_config(config))
    message = str(err.value)
    assert message.startswith(f"{config}:6: clusters: no case in")
    assert "did you mean 'metadata.doc_id'?" in message
    assert "\n" not in message


def test_the_refusal_exits_2_with_one_line(tmp_path: Path) -> None:
    config = project(tmp_path, "clusters: doc")
    done = evalkit("gate", "--config", config, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert f"{config.name}:6" in lines[0]
    assert "'doc'" in lines[0]


@pytest.mark.parametrize(
    ("line", "needle"),
    [("clusters: query", "defines a case"), ("clusters: 'metadata.'", "not a field name")],
)
def test_bad_cluster_fields_are_refused_at_load(tmp_path: Path, line: str, needle: str) -> None:
    config = project(tmp_path, line)
    with pytest.raises(ConfigError) as err:
        load_config(config)
    assert f"{config}:6" in str(err.value)
    assert needle in str(err.value)


def test_a_value_that_cannot_name_a_cluster_names_the_case(tmp_path: Path) -> None:
    goldens = GOLDENS + '{"id": "e", "query": "e", "metadata": {"doc_id": []}}\n'
    with pytest.raises(GoldenError, match=r"case 'e': cluster field 'metadata.doc_id' must be"):
        prepare(load_config(project(tmp_path, "clusters: metadata.doc_id", goldens)))


def test_declaring_clusters_keeps_every_case_fingerprint(tmp_path: Path) -> None:
    """A baseline made before the field was declared still pairs every case."""
    plain = prepare(load_config(project(tmp_path, ""))).goldens
    declared = plain.with_clusters("metadata.doc_id")
    assert plain.case_fingerprints() == declared.case_fingerprints()


def _artefact(goldens: GoldenSet) -> object:
    rows = [QueryResult(c.id, [], {"recall@1": 1.0}) for c in goldens]
    return build_artifact(RunResult("run", rows), [], goldens=goldens_info(goldens))


def test_the_artefact_records_the_assignment_and_refuses_an_edited_one(tmp_path: Path) -> None:
    goldens = prepare(load_config(project(tmp_path, "clusters: metadata.doc_id"))).goldens
    doc = artifact_to_dict(_artefact(goldens))  # type: ignore[arg-type]
    recorded = doc["goldens"]["clusters"]
    assert recorded["field"] == "metadata.doc_id"
    assert recorded["cases"] == {"a": "doc-1", "b": "doc-1", "c": "7", "d": None}
    back = artifact_from_dict(doc)
    assert back.goldens is not None
    assert back.goldens.clusters == goldens.cluster_assignment()
    doc["goldens"]["clusters"]["cases"]["d"] = "doc-1"
    with pytest.raises(ArtifactError, match="does not match its fingerprint"):
        artifact_from_dict(doc)
    # a run without clusters writes none, and reads back without any
    plain = artifact_to_dict(_artefact(goldens.with_clusters(None)))  # type: ignore[arg-type]
    assert "clusters" not in plain["goldens"]


def test_a_baseline_with_another_assignment_pairs_by_case_and_says_so(tmp_path: Path) -> None:
    import shutil

    example = Path(__file__).resolve().parents[3] / "examples" / "clustered_rag"
    work = tmp_path / "example"
    shutil.copytree(example, work, ignore=shutil.ignore_patterns("baseline.json", "__pycache__"))
    plain = (work / "evalkit-baseline.yaml").read_text().replace("clusters: metadata.doc_id", "")
    (work / "evalkit-baseline.yaml").write_text(plain)
    made = evalkit("run", "--config", "evalkit-baseline.yaml", "--out", "baseline.json", cwd=work)
    assert made.returncode == 0, made.stderr
    done = evalkit("gate", "--config", "evalkit.yaml", "--out", tmp_path / "run.json", cwd=work)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        "the baseline declared no clusters; its cases are paired by case id and every "
        "verdict is inferred by the current clusters (metadata.doc_id)"
    ) in " ".join(done.stdout.split())
    assert "Every check covered all 269 cases in 36 clusters." in done.stdout
