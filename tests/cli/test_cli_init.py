"""``evalkit init``: the scaffold's first gate passes, and it never overwrites a file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from helpers.cli import evalkit
from helpers.tiny_project import one_line_error

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
FILES = (
    "evalkit.yaml",
    "checks.yaml",
    "goldens.jsonl",
    "evalkit_target.py",
    ".github/workflows/evalkit.yml",
)
# A CI job's own GitHub variables must not make the artifact store call GitHub.
NO_GITHUB = {"GITHUB_TOKEN": "", "GH_TOKEN": "", "GITHUB_REPOSITORY": ""}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    done = evalkit("init", "proj", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return tmp_path / "proj"


def test_init_writes_every_file_and_says_the_two_commands_next(tmp_path: Path) -> None:
    done = evalkit("init", "proj", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for name in FILES:
        assert (tmp_path / "proj" / name).is_file(), name
    lines = done.stdout.splitlines()
    assert lines[0] == f"wrote {', '.join(FILES)} in proj"
    commands = [
        line.strip() for line in lines if line.startswith("  ") and not line.startswith("   ")
    ]
    assert commands == [
        "cd proj && evalkit gate",
        f'git add {" ".join(FILES)} && git commit -m "Add evalkit" && git push',
    ]
    assert done.stderr == ""


def test_the_first_gate_of_the_scaffold_passes(project: Path) -> None:
    gate = evalkit("gate", "--json", "r.json", cwd=project, env=NO_GITHUB)
    assert gate.returncode == 0, gate.stdout + gate.stderr
    report = json.loads((project / "r.json").read_text())
    # exit 0; "warn" rather than "pass" only because there is no baseline yet, loudly
    assert report["verdict"] == "warn"
    statuses = {c["id"]: c["status"] for c in report["checks"]}
    assert statuses == {"recall_floor": "pass", "no_ndcg_regression": "no-baseline"}


def test_run_then_gate_against_that_run_from_the_scaffold(project: Path) -> None:
    run = evalkit("run", "--out", "main.json", cwd=project, env=NO_GITHUB)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "wrote main.json (6 cases)\n"
    gate = evalkit("gate", "--baseline", "main.json", "--json", "-", cwd=project, env=NO_GITHUB)
    assert gate.returncode == 0, gate.stderr
    statuses = {c["id"]: c["status"] for c in json.loads(gate.stdout)["checks"]}
    assert statuses == {"recall_floor": "pass", "no_ndcg_regression": "pass"}


@pytest.mark.parametrize("existing", FILES)
def test_init_refuses_to_overwrite_and_writes_nothing(tmp_path: Path, existing: str) -> None:
    mine = tmp_path / existing
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text("mine\n")
    done = evalkit("init", cwd=tmp_path)
    one_line_error(done, 2, "writes nothing", existing, "already exist")
    assert mine.read_text() == "mine\n"
    written = {str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()}
    assert written == {existing}


def test_init_names_every_file_in_the_way(tmp_path: Path) -> None:
    for name in ("evalkit.yaml", "goldens.jsonl"):
        (tmp_path / name).write_text("mine\n")
    done = evalkit("init", cwd=tmp_path)
    one_line_error(done, 2, "evalkit.yaml", "goldens.jsonl")


def test_the_workflow_is_the_documented_example_and_valid(project: Path) -> None:
    workflow = project / ".github" / "workflows" / "evalkit.yml"
    assert workflow.read_text() == (ROOT / "examples" / "workflows" / "evalkit.yml").read_text()
    uses = [
        step["uses"]
        for job in yaml.safe_load(workflow.read_text())["jobs"].values()
        for step in job["steps"]
        if "evalkit" in step.get("uses", "")
    ]
    assert uses == ["skbugudi/evalkit-action@v1"] * 2
    check = subprocess.run(
        [BIN / "check-jsonschema", "--builtin-schema", "vendor.github-workflows", workflow],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr
