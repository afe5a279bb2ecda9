"""The workflows users copy, and ours: schema, zizmor, and re-runnability by construction."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples" / "workflows").glob("*.yml"))
OURS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
BIN = Path(sys.executable).parent


def steps(path: Path) -> list[dict[str, Any]]:
    doc = yaml.safe_load(path.read_text())
    return [step for job in doc["jobs"].values() for step in job.get("steps", [])]


def uses(step: dict[str, Any], action: str) -> bool:
    return str(step.get("uses", "")).startswith(action + "@")


def tool(name: str) -> str:
    found = shutil.which(name, path=str(BIN)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed (uv sync installs the dev tools)")
    return found


def test_workflows_match_the_github_workflow_schema() -> None:
    run = subprocess.run(
        [tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows"]
        + [str(p) for p in EXAMPLES + OURS],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_workflows_pass_zizmor() -> None:
    run = subprocess.run(
        [tool("zizmor"), "--offline", "--config", str(ROOT / ".github/zizmor.yml")]
        + [str(p) for p in EXAMPLES + OURS],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("path", EXAMPLES + OURS, ids=lambda p: p.name)
def test_every_upload_overwrites_so_a_rerun_can_turn_green(path: Path) -> None:
    for step in steps(path):
        if uses(step, "actions/upload-artifact"):
            assert step["with"].get("overwrite") is True, (path.name, step.get("name"))


def test_example_artifact_names_are_per_config() -> None:
    gate = ROOT / "examples" / "workflows" / "evalkit.yml"
    names = [s["with"]["name"] for s in steps(gate) if uses(s, "actions/upload-artifact")]
    assert names, "the example uploads nothing"
    for name in names:
        assert "steps.evalkit.outputs.config-name" in name or (
            "steps.evalkit.outputs.baseline-name" in name
        ), name
    companion = ROOT / "examples" / "workflows" / "evalkit-comment.yml"
    (download,) = [s for s in steps(companion) if uses(s, "actions/download-artifact")]
    assert download["with"]["pattern"] == "evalkit-report-*"
    assert download["with"]["merge-multiple"] is False


def test_example_concurrency_cancels_pull_requests_only() -> None:
    doc = yaml.safe_load((ROOT / "examples" / "workflows" / "evalkit.yml").read_text())
    concurrency = doc["concurrency"]
    assert concurrency["cancel-in-progress"] == "${{ github.event_name == 'pull_request' }}"
    group = " ".join(concurrency["group"].split())
    # Each push has its own group: a later merge neither cancels nor replaces a pending
    # promotion (GitHub cancels a pending run when another joins its group).
    assert "format('push-{0}', github.sha)" in group
    assert "github.event.pull_request.number" in group


def test_example_uses_line_matches_the_published_action() -> None:
    for path in EXAMPLES:
        for step in steps(path):
            if "evalkit" in str(step.get("uses", "")):
                assert step["uses"] == "skbugudi/evalkit-action@v1"
    readme = (ROOT / "README.md").read_text()
    assert "uses: skbugudi/evalkit-action@v1" in readme
    assert "github.com/skbugudi/evalkit-action" in readme  # the repository it is published as
