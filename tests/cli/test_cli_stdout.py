"""``-`` as an output path is stdout (docs/stdout.md): stdout then holds that document alone.

The invariant: what ``--FLAG -`` prints is byte for byte what ``--FLAG FILE`` writes, the human
report moves to stderr, no file named ``-`` appears, and two ``-`` are refused naming both.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from helpers.cli import evalkit, write_files
from helpers.tiny_project import CHECKS, CONFIG, GOLDENS, TARGET_MODULE, one_line_error

GATE_DOCUMENTS = ("--json", "--markdown", "--html")
NO_GITHUB = {"GITHUB_TOKEN": "", "GH_TOKEN": "", "GITHUB_REPOSITORY": ""}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    files = {"tiny_target.py": TARGET_MODULE, "goldens.jsonl": GOLDENS, "checks.yaml": CHECKS}
    root = write_files(tmp_path, {**files, "evalkit.yaml": CONFIG})
    for name in ("base.json", "cand.json"):
        done = evalkit("run", "--out", name, cwd=root)
        assert done.returncode == 0, done.stderr
    return root


def gate(project: Path, *extra: str) -> tuple[int, str, str]:
    done = evalkit(
        "gate", "--candidate", "cand.json", "--baseline", "base.json", *extra, cwd=project
    )
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("flag", GATE_DOCUMENTS)
def test_a_gate_document_on_stdout_is_the_file_it_would_write(project: Path, flag: str) -> None:
    code, printed, told = gate(project, flag, "-")
    assert code == 0, told
    assert not (project / "-").exists()
    written_code, human, _ = gate(project, flag, "report.out")
    assert written_code == 0
    assert printed == (project / "report.out").read_text()
    # The verdict a person reads moved to stderr, the same lines as on stdout without '-'.
    assert "no_regression" in told
    assert human.strip() in told
    if flag == "--json":
        assert json.loads(printed)["verdict"] == "pass"


@pytest.mark.parametrize(("first", "second"), list(itertools.combinations(GATE_DOCUMENTS, 2)))
def test_two_documents_on_stdout_are_refused_naming_both(
    project: Path, first: str, second: str
) -> None:
    done = evalkit("gate", "--candidate", "cand.json", first, "-", second, "-", cwd=project)
    one_line_error(done, 2, f"{first} -", f"{second} -", "stdout")
    assert done.stdout == ""


def test_one_document_on_stdout_and_another_in_a_file(project: Path) -> None:
    code, printed, told = gate(project, "--json", "-", "--markdown", "r.md")
    assert code == 0, told
    assert json.loads(printed)["verdict"] == "pass"
    assert (project / "r.md").read_text().startswith("<!-- evalkit report")


@pytest.mark.parametrize(
    "argv",
    [
        ("gate", "--out", "-"),
        ("run", "--out", "-"),
        ("merge", "base.json", "--out", "-"),
    ],
)
def test_a_run_artefact_is_never_stdout(project: Path, argv: tuple[str, ...]) -> None:
    one_line_error(evalkit(*argv, cwd=project), 2, "--out -", "name a file")
    assert not (project / "-").exists()


def test_compare_html_on_stdout_and_the_table_on_stderr(project: Path) -> None:
    done = evalkit("compare", "cand.json", "base.json", "--html", "-", cwd=project)
    assert done.returncode == 0, done.stderr
    filed = evalkit("compare", "cand.json", "base.json", "--html", "c.html", cwd=project)
    assert done.stdout == (project / "c.html").read_text()
    assert done.stderr == filed.stdout
    assert not (project / "-").exists()


def test_history_json_on_stdout(project: Path) -> None:
    (project / "evalkit.yaml").write_text(CONFIG + "baseline: {path: baseline.json}\n")
    assert evalkit("promote", "base.json", cwd=project).returncode == 0
    done = evalkit("history", "--json", "-", cwd=project, env=NO_GITHUB)
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["promotions"]) == 1
    assert "1 promotion(s) kept in" in done.stderr


def test_score_writes_its_artefact_to_stdout(tmp_path: Path) -> None:
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d2 1\n")
    argv = ("score", "run.txt", "qrels.txt", "--metrics", "recall@1,ndcg@10")
    done = evalkit(*argv, "--out", "-", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "to stdout (1 queries scored from run.txt)" in done.stderr
    (tmp_path / "piped.json").write_text(done.stdout)
    shown = evalkit("show", "piped.json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "ndcg@10" in shown.stdout
    assert not (tmp_path / "-").exists()
