"""Through the CLI: a plugin metric's fingerprint follows its code, so a comment edit keeps
a baseline comparable and a formula edit makes it incomparable; schema-1 baselines stay
comparable while the plugin's text is unchanged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from helpers.cli import evalkit, write_files

FIXTURES = Path(__file__).parents[1] / "data" / "artifacts"

TARGET = """
from evalkit import CallableTarget

RANK = {"a": ["d1", "d2"], "b": ["d3", "d1"], "c": ["d2", "d9"], "d": ["d4"]}


def make_target():
    return CallableTarget(lambda case: RANK[case.id], name="fixture-ranker")
"""

# The cases v1.json was made from (same ids, queries and relevance: same fingerprints).
GOLDENS = (
    '{"id": "a", "query": "alpha", "relevant": ["d1"]}\n'
    '{"id": "b", "query": "beta", "relevant": ["d1"]}\n'
    '{"id": "c", "query": "gamma", "relevant": ["d2"]}\n'
    '{"id": "d", "query": "delta", "relevant": ["d4"]}\n'
)

CHECKS = """\
checks:
  - id: first_hit_holds
    metric: first_hit
    vs_baseline: no_significant_regression
"""

CONFIG = """\
name: fixture
goldens: goldens.jsonl
checks: checks.yaml
metrics: [recall@1, first_hit]
plugins: [v1_plugin]
python_path: ["."]
target:
  python: "fixture_target:make_target"
n_resamples: 200
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(FIXTURES / "v1_plugin.py", tmp_path / "v1_plugin.py")
    files = {"fixture_target.py": TARGET, "goldens.jsonl": GOLDENS, "checks.yaml": CHECKS}
    return write_files(tmp_path, {**files, "evalkit.yaml": CONFIG})


def edit_plugin(project: Path, old: str, new: str) -> None:
    path = project / "v1_plugin.py"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def gate_status(project: Path, baseline: Path | str) -> tuple[int, str]:
    """The gate's exit code and the status of the first_hit check, from its JSON report."""
    gate = evalkit("gate", "--baseline", baseline, "--json", "report.json", cwd=project)
    assert gate.returncode in (0, 1), gate.stdout + gate.stderr
    report = json.loads((project / "report.json").read_text())
    (check,) = [c for c in report["checks"] if c["id"] == "first_hit_holds"]
    return gate.returncode, check["status"]


def test_a_comment_edit_keeps_the_baseline_comparable(project: Path) -> None:
    assert evalkit("run", "--out", "base.json", cwd=project).returncode == 0
    edit_plugin(project, "def first_hit(", "# the top result is relevant\ndef first_hit(")
    edit_plugin(
        project, "    return float(", '    """Docstrings do not count."""\n    return float('
    )
    assert gate_status(project, "base.json") == (0, "pass")


def test_a_formula_edit_makes_the_baseline_incomparable(project: Path) -> None:
    assert evalkit("run", "--out", "base.json", cwd=project).returncode == 0
    edit_plugin(project, "ranked_ids[0] in", "ranked_ids[-1] in")
    assert gate_status(project, "base.json") == (1, "incomparable")


def test_a_declared_version_is_the_fingerprint(project: Path) -> None:
    edit_plugin(project, "higher_is_better=True)", 'higher_is_better=True, version="2")')
    assert evalkit("run", "--out", "base.json", cwd=project).returncode == 0
    # the author decides what counts as a new definition: the same version is comparable
    edit_plugin(project, "ranked_ids[0] in", "ranked_ids[-1] in")
    assert gate_status(project, "base.json")[1] != "incomparable"
    edit_plugin(project, 'version="2"', 'version="3"')
    assert gate_status(project, "base.json") == (1, "incomparable")


def test_a_schema_1_baseline_stays_comparable_while_the_plugin_text_is_unchanged(
    project: Path,
) -> None:
    assert gate_status(project, FIXTURES / "v1.json")[1] != "incomparable"
    # schema 1 hashed the text: after a comment edit it can no longer vouch for the code
    edit_plugin(project, "def first_hit(", "# edited\ndef first_hit(")
    assert gate_status(project, FIXTURES / "v1.json") == (1, "incomparable")
