"""A retrieval metric declared in evalkit.yaml with its relevance level: the level changes the
values, is part of the metric's identity, and two levels are incomparable, never compared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit._app.pipeline import prepare
from evalkit._model.registry import get_metric
from evalkit._spec.config import load_config
from evalkit.errors import ConfigError, MetricError
from helpers.artefact_docs import load_artefact
from helpers.cli import evalkit, write_files

# Graded goldens: d1 is highly relevant (2), d2 marginally (1).  The service ranks d2 first.
GOLDENS = "".join(
    json.dumps({"id": f"q{i}", "query": f"query {i}", "relevant": {"d1": 2, "d2": 1}}) + "\n"
    for i in range(6)
)
TARGET = """
from evalkit import CallableTarget, TargetResponse


def make_target():
    return CallableTarget(lambda case: TargetResponse(ranked_ids=["d2", "x", "d1"]), name="s")
"""
CONFIG = """\
goldens: goldens.jsonl
checks: checks.yaml
metrics:
  - recall@1
  - name: strict_recall@1
    kind: recall@1
    relevance_level: {level}
target:
  python: "ranker:make_target"
"""
CHECKS = """\
checks:
  - id: strict_held
    metric: strict_recall@1
    vs_baseline: no_significant_regression
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_files(
        tmp_path,
        {
            "ranker.py": TARGET,
            "goldens.jsonl": GOLDENS,
            "checks.yaml": CHECKS,
            "evalkit.yaml": CONFIG.format(level=2),
        },
    )


def test_the_level_changes_the_value_and_is_recorded_on_the_definition(project: Path) -> None:
    result = evalkit("run", "--out", "base.json", cwd=project)
    assert result.returncode == 0, result.stderr
    doc = load_artefact(project / "base.json")
    # recall@1 at level 1: d2 (grade 1) is relevant, 1 of 2 found; at level 2 only d1
    # counts, and it is ranked third: 0 of 1.
    assert {r["id"]: r["metrics"] for r in doc["rows"]}["q0"] == {
        "recall@1": 0.5,
        "strict_recall@1": 0.0,
    }
    assert doc["metrics"]["strict_recall@1"]["params"] == {"relevance_level": 2}
    prepare(load_config(project / "evalkit.yaml"))
    assert get_metric("strict_recall@1").params == (("relevance_level", 2),)


def test_two_levels_are_incomparable(project: Path) -> None:
    assert evalkit("run", "--out", "base.json", cwd=project).returncode == 0
    same = evalkit("gate", "--baseline", "base.json", cwd=project)
    assert same.returncode == 0, same.stdout + same.stderr
    (project / "evalkit.yaml").write_text(CONFIG.format(level=1))
    changed = evalkit("gate", "--baseline", "base.json", cwd=project)
    assert "incomparable" in changed.stdout, changed.stdout + changed.stderr
    assert "relevance_level" in changed.stdout + changed.stderr


@pytest.mark.parametrize(
    ("replace", "message"),
    [
        ("relevance_level: 2", "relevance_level: 0"),
        ("relevance_level: 2", "relevance_lvl: 2"),
        ("kind: recall@1", "kind: ndcg@1"),
        ("name: strict_recall@1", "name: recall@7"),
    ],
    ids=["level 0", "unknown parameter", "ndcg takes no level", "name owned by a family"],
)
def test_a_bad_retrieval_declaration_is_refused_at_load_with_its_line(
    project: Path, replace: tuple[str, str] | str, message: str
) -> None:
    config = project / "evalkit.yaml"
    config.write_text(CONFIG.format(level=2).replace(str(replace), message))
    with pytest.raises((ConfigError, MetricError)) as info:
        prepare(load_config(config))
    text = str(info.value)
    assert text.startswith(f"{config}"), text
    assert "strict_recall@1" in text or "recall@7" in text
    result = evalkit("run", "--out", "x.json", cwd=project)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1, result.stderr
