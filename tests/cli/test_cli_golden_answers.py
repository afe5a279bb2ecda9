"""`answers:` (and the other phrase lists) are read when the goldens load, not per case.

YAML reads ``answers: [1889, in 1889]`` as an integer and a string; ``expected: 1889``
has always been read as written, and now the lists are too.  What cannot be text is
refused at its line before the target is called once.  ``evalkit run`` in process.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit.cli import main
from helpers.artefact_docs import load_artefact
from helpers.judge_project import imports_undone

MODULE = "phrase_list_target"

TARGET = """\
from evalkit import CallableTarget

CALLS = []


def answer(case):
    CALLS.append(case.id)
    return "1889"


def make_target():
    return CallableTarget(answer, name="dates")
"""

CONFIG = f"""\
goldens: goldens.yaml
checks: checks.yaml
metrics: [exact_match, contains_any]
target:
  python: "{MODULE}:make_target"
"""
CHECKS = "checks:\n  - id: ok\n    metric: exact_match\n    op: '>='\n    threshold: 0.0\n"


@pytest.fixture(autouse=True)
def _own_imports() -> Iterator[None]:
    with imports_undone(MODULE):
        yield


def run(tmp_path: Path, goldens: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    (tmp_path / f"{MODULE}.py").write_text(TARGET)
    (tmp_path / "goldens.yaml").write_text(goldens)
    (tmp_path / "checks.yaml").write_text(CHECKS)
    (tmp_path / "evalkit.yaml").write_text(CONFIG)
    code = main(["run", "-c", str(tmp_path / "evalkit.yaml"), "--out", str(tmp_path / "r.json")])
    return code, capsys.readouterr().err


def calls() -> list[str]:
    return list(sys.modules[MODULE].CALLS) if MODULE in sys.modules else []


def test_numbers_in_answers_are_read_as_written_like_expected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    goldens = (
        "- id: eiffel\n"
        "  query: When was the Eiffel Tower finished?\n"
        "  answers: [1889, in 1889]\n"
        "  must_include: [1889]\n"
    )
    code, err = run(tmp_path, goldens, capsys)
    assert code == 0, err
    (row,) = load_artefact(tmp_path / "r.json")["rows"]
    assert row["metrics"] == {"exact_match": 1.0, "contains_any": 1.0}


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("[{year: 1889}]", "answers must be a list of strings, and an item is dict"),
        ("[1889, null]", "answers must be a list of strings, and an item is null"),
        ("[1889.0]", "answers item 1889.0 must be text: 1889.0 is a number with a decimal"),
        ("[yes]", "answers item True must be text: True is a boolean"),
        ("['']", "answers holds an empty string"),
    ],
)
def test_an_answer_that_cannot_be_text_is_refused_at_its_line_before_the_target_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, words: str
) -> None:
    goldens = f"- id: ok\n  query: q\n  expected: x\n- id: eiffel\n  query: q\n  answers: {value}\n"
    code, err = run(tmp_path, goldens, capsys)
    assert code == 2
    assert err.startswith(
        f"evalkit: {tmp_path / 'goldens.yaml'}:4: case #2 (id 'eiffel'): {words}"
    ), err
    assert len(err.splitlines()) == 1
    assert calls() == []  # nothing was paid for
