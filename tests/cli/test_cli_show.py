"""``evalkit show RUN --case ID`` as a subprocess: one case against its golden."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli_compare import CHECKS, GOLDENS, TARGET, config

from evalkit._model.formats import ARTIFACT_SCHEMA_VERSION
from helpers.cli import answer_target, evalkit, write_files
from helpers.tiny_project import one_line_error

TEXT_TARGET = answer_target({"a": "Paris", "b": "It is Munich.\nSurely."})

TEXT_GOLDENS = (
    '{"id": "a", "query": "Capital of France?", "expected": "Paris"}\n'
    '{"id": "b", "query": "Capital of Germany?", "expected": "Berlin", '
    '"answers": ["Berlin, Germany"], "must_include": ["Berlin"]}\n'
)

TEXT_CONFIG = """\
goldens: goldens.jsonl
checks: checks.yaml
metrics: [exact_match, token_f1]
target:
  python: "qa:make_target"
"""

TEXT_CHECKS = """\
checks:
  - id: floor
    metric: exact_match
    op: ">="
    threshold: 0.0
"""


@pytest.fixture(scope="module")
def ranked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("show")
    files = {"systems.py": TARGET, "goldens.jsonl": GOLDENS, "checks.yaml": CHECKS}
    write_files(root, {**files, "evalkit.yaml": config("worse"), "flaky.yaml": config("flaky")})
    assert evalkit("run", "--out", "worse.json", cwd=root).returncode == 0
    evalkit("run", "-c", "flaky.yaml", "--out", "flaky.json", "--allow-failed", cwd=root)
    return root


@pytest.fixture(scope="module")
def answered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("show-text")
    files = {"qa.py": TEXT_TARGET, "goldens.jsonl": TEXT_GOLDENS, "checks.yaml": TEXT_CHECKS}
    write_files(root, {**files, "evalkit.yaml": TEXT_CONFIG})
    result = evalkit("run", "--out", "qa.json", cwd=root)
    assert result.returncode == 0, result.stderr
    return root


def show(root: Path, *args: str) -> list[str]:
    result = evalkit("show", *args, cwd=root)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return result.stdout.splitlines()


def field(lines: list[str], name: str) -> str:
    (line,) = [line for line in lines if line.startswith(f"{name}:")]
    return line.split(":", 1)[1].strip()


def test_a_ranked_case_shows_its_ids_against_the_relevant_ones(ranked: Path) -> None:
    lines = show(ranked, "worse.json", "--case", "c07")
    assert field(lines, "case") == "c07"
    assert field(lines, "query") == "question 7"
    assert field(lines, "output") == "3 ranked id(s)"
    ranks = [line.split() for line in lines if line.strip()[:2] in ("1.", "2.", "3.")]
    assert ranks == [["1.", "x"], ["2.", "y"], ["3.", "r7", "relevant"]]
    assert field(lines, "relevant") == "r7"
    assert "1 of 1 retrieved" in "\n".join(lines)
    metrics = lines[lines.index("metrics:") + 1 :][:2]
    assert [m.split() for m in metrics] == [["recall@1", "0.0000"], ["ndcg@10", "0.5000"]]
    assert field(lines, "latency").endswith(" ms")
    assert not any(line.startswith("error:") for line in lines)


def test_the_golden_file_can_be_named_and_a_changed_golden_is_flagged(ranked: Path) -> None:
    other = ranked / "edited.jsonl"
    other.write_text(GOLDENS.replace('"relevant": ["r7"]', '"relevant": ["r7", "x"]'))
    lines = show(ranked, "worse.json", "--case", "c07", "--goldens", "edited.jsonl")
    text = "\n".join(lines)
    assert field(lines, "golden") == "edited.jsonl"
    assert "this case changed in the golden file since the run" in text
    assert field(lines, "relevant") == "r7, x"
    unchanged = show(ranked, "worse.json", "--case", "c08", "--goldens", "edited.jsonl")
    assert "changed in the golden file" not in "\n".join(unchanged)


def test_a_failed_case_shows_its_error_and_no_scores(ranked: Path) -> None:
    lines = show(ranked, "flaky.json", "--case", "c00", "-c", "flaky.yaml")
    assert field(lines, "case") == "c00  FAILED (error below)"
    assert "backend down" in field(lines, "error")
    assert field(lines, "output").startswith("none")
    metrics = lines[lines.index("metrics:") + 1 :][:2]
    assert all(m.split(None, 1)[1] == "not scored (the case failed)" for m in metrics)


def test_a_text_answer_is_shown_beside_the_expected_one(answered: Path) -> None:
    lines = show(answered, "qa.json", "--case", "b")
    text = "\n".join(lines)
    out = lines.index("output:")
    assert [line.strip() for line in lines[out + 1 : out + 3]] == ["It is Munich.", "Surely."]
    exp = lines.index("expected:")
    assert lines[exp + 1].strip() == "Berlin"
    assert field(lines, "also accepted") == "Berlin, Germany"
    assert field(lines, "must include") == "Berlin"
    metrics = {m.split()[0]: m.split()[1] for m in lines[lines.index("metrics:") + 1 :][:2]}
    assert metrics == {"exact_match": "0.0000", "token_f1": "0.0000"}
    assert "relevant:" not in text


def test_without_goldens_the_case_is_shown_and_says_where_expected_lives(
    answered: Path, tmp_path: Path
) -> None:
    (tmp_path / "qa.json").write_bytes((answered / "qa.json").read_bytes())
    lines = show(tmp_path, "qa.json", "--case", "a")
    assert field(lines, "expected").startswith("not stored in the run artefact: pass --goldens")
    out = lines.index("output:")
    assert lines[out + 1].strip() == "Paris"
    assert field(lines, "case") == "a"


def test_an_unknown_case_is_one_line_with_a_suggestion(ranked: Path) -> None:
    result = evalkit("show", "worse.json", "--case", "c07x", cwd=ranked)
    one_line_error(result, 2, "worse.json", "no case 'c07x'", "did you mean 'c07'?")
    far = evalkit("show", "worse.json", "--case", "zzz", cwd=ranked)
    one_line_error(far, 2, "no case 'zzz'", "its cases: c00, c01")


def test_a_case_id_in_other_letter_case_is_named_as_such(ranked: Path) -> None:
    # ids match exactly; difflib alone finds nothing near "C07" among lowercase ids
    result = evalkit("show", "worse.json", "--case", "C07", cwd=ranked)
    one_line_error(result, 2, "no case 'C07'", "did you mean 'c07'? it differs only in letter case")


def test_a_named_golden_file_that_is_broken_is_an_error_not_a_note(ranked: Path) -> None:
    (ranked / "broken.jsonl").write_text('{"id": "c07"\n')
    result = evalkit("show", "worse.json", "--case", "c07", "--goldens", "broken.jsonl", cwd=ranked)
    one_line_error(result, 2, "broken.jsonl")


def test_golden_options_without_case_are_refused(ranked: Path) -> None:
    one_line_error(
        evalkit("show", "worse.json", "--goldens", "goldens.jsonl", cwd=ranked), 2, "--case"
    )


def test_show_without_case_still_summarises_the_run(ranked: Path) -> None:
    lines = show(ranked, "flaky.json")
    assert lines[0] == f"flaky.json: artefact schema_version {ARTIFACT_SCHEMA_VERSION} (current)"
    assert "  c00: " in "\n".join(lines)
    assert json.loads((ranked / "flaky.json").read_text())["run_name"] == "flaky"


def test_a_scored_trec_query_is_shown_against_its_qrels(tmp_path: Path) -> None:
    (tmp_path / "qrels.txt").write_text("q1 0 d1 2\nq1 0 d2 1\nq1 0 d5 0\nq2 0 d3 1\n")
    (tmp_path / "run.txt").write_text("q1 Q0 d2 1 2.0 sys\nq1 Q0 d9 2 1.0 sys\nq2 Q0 d3 1 1.0 s\n")
    scored = evalkit(
        "run", "--trec-run", "run.txt", "--qrels", "qrels.txt", "--metrics", "recall@1",
        "--out", "trec.json", cwd=tmp_path,
    )  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    lines = show(tmp_path, "trec.json", "--case", "q1", "--qrels", "qrels.txt")
    assert field(lines, "qrels") == "qrels.txt"
    ranks = [line.split() for line in lines if line.strip()[:2] in ("1.", "2.")]
    assert ranks == [["1.", "d2", "grade", "1"], ["2.", "d9"]]
    assert field(lines, "relevant") == "d1 (grade 2), d2 (grade 1)"  # grade 0 is not relevant
    assert "1 of 2 retrieved; not retrieved: d1" in "\n".join(lines)
    assert not any(line.startswith(("query:", "latency:")) for line in lines)
    both = evalkit(
        "show", "trec.json", "--case", "q1", "--qrels", "qrels.txt", "--goldens", "g.jsonl",
        cwd=tmp_path,
    )  # fmt: skip
    one_line_error(both, 2, "--goldens or --qrels")
