"""`evalkit promote RUN`: the local baseline workflow, like a snapshot update.

It makes a run the baseline file evalkit.yaml names, and refuses what would make a
baseline lie: failed cases, a shard, another config's run, a store only the Action writes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit._spec.artifact import write_artifact
from helpers.artefact_docs import load_artefact
from helpers.cli import evalkit, write_files
from helpers.history_runs import run
from helpers.tiny_project import CHECKS, CONFIG, GOLDENS, TARGET_MODULE, one_line_error

WITH_BASELINE = CONFIG + "baseline: {path: baseline.json}\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    files = {"tiny_target.py": TARGET_MODULE, "goldens.jsonl": GOLDENS, "checks.yaml": CHECKS}
    return write_files(tmp_path, {**files, "evalkit.yaml": WITH_BASELINE})


def rows(path: Path) -> list[dict[str, object]]:
    doc = load_artefact(path)
    return [{k: v for k, v in row.items() if k != "latency_ms"} for row in doc["rows"]]


def test_promote_makes_the_run_the_baseline_the_gate_uses(project: Path) -> None:
    assert evalkit("run", "--out", "first.json", cwd=project).returncode == 0
    promoted = evalkit("promote", "first.json", cwd=project)
    assert promoted.returncode == 0, promoted.stderr
    assert promoted.stdout.startswith("promoted first.json to the baseline ")
    assert "(3 cases, " in promoted.stdout
    baseline = project / "baseline.json"
    assert rows(baseline) == rows(project / "first.json")
    gate = evalkit("gate", "--json", "report.json", cwd=project)
    assert gate.returncode == 0, gate.stdout + gate.stderr
    report = json.loads((project / "report.json").read_text())
    statuses = {check["id"]: check["status"] for check in report["checks"]}
    assert statuses["no_regression"] == "pass"  # compared with the promoted run

    # promoting again says what it replaced; with no RUN it takes the config's output
    assert evalkit("run", cwd=project).returncode == 0
    again = evalkit("promote", cwd=project)
    assert again.returncode == 0, again.stderr
    # outside git the old baseline has no commit: the sentence still reads as one
    assert "it replaces the baseline created " in again.stdout
    assert " of created" not in again.stdout


def test_promote_names_the_commit_of_the_baseline_it_replaces(project: Path) -> None:
    values = {"c1": {"ndcg@10": 0.5}}
    write_artifact(run("old", values, sha="a1b2c3d" + "0" * 33), project / "old.json")
    write_artifact(run("new", values, sha="e4f5a6b" + "0" * 33), project / "new.json")
    assert evalkit("promote", "old.json", cwd=project).returncode == 0
    again = evalkit("promote", "new.json", cwd=project)
    assert again.returncode == 0, again.stderr
    assert "it replaces the baseline of commit a1b2c3d, created " in again.stdout


def test_promote_refuses_a_run_with_failed_cases_and_keeps_the_baseline(project: Path) -> None:
    assert evalkit("run", "--out", "good.json", cwd=project).returncode == 0
    assert evalkit("promote", "good.json", cwd=project).returncode == 0
    before = (project / "baseline.json").read_bytes()
    (project / "goldens.jsonl").write_text(GOLDENS + '{"id": "z", "query": "zeta"}\n')
    run = evalkit("run", "--out", "bad.json", "--allow-failed", cwd=project)
    assert run.returncode == 3
    promoted = evalkit("promote", "bad.json", cwd=project)
    one_line_error(promoted, 2, "bad.json: 1 of 4 case(s) failed (z)", "--resume")
    assert (project / "baseline.json").read_bytes() == before


def test_promote_refuses_a_shard(project: Path) -> None:
    assert evalkit("run", "--shard", "1/2", "--out", "s1.json", cwd=project).returncode == 0
    one_line_error(evalkit("promote", "s1.json", cwd=project), 2, "shard 1/2", "merge")
    assert not (project / "baseline.json").exists()


def test_promote_refuses_a_run_of_another_config(project: Path) -> None:
    assert evalkit("run", "--out", "mine.json", cwd=project).returncode == 0
    (project / "evalkit.yaml").write_text("name: other\n" + WITH_BASELINE)
    one_line_error(evalkit("promote", "mine.json", cwd=project), 2, "not 'other'")


def test_promote_needs_a_file_store(project: Path) -> None:
    (project / "evalkit.yaml").write_text(CONFIG)  # no baseline: the Action's artifact store
    assert evalkit("run", "--out", "r.json", cwd=project).returncode == 0
    one_line_error(
        evalkit("promote", "r.json", cwd=project),
        2,
        "baseline.store is 'artifact'",
        "mode: promote",
    )


def test_promote_of_a_missing_run_names_it(project: Path) -> None:
    one_line_error(evalkit("promote", "nope.json", cwd=project), 2, "nope.json", "not found")
