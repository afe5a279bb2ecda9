"""The judge-human agreement line says in plain words when resamples were left out.

Eight human-graded cases, almost all graded 5 by both sides: a third of the bootstrap
resamples hold no variation, have no κ, and are left out, so the interval is not the
95% one it would otherwise read as.  ``evalkit gate`` in process, judge on loopback.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit.cli import main
from fakes.openai_server import FakeOpenAI, grade
from helpers.cli import answer_target
from helpers.judge_project import imports_undone, openai_judge_config

MODULE = "agreement_words_target"
ANSWERS = {f"c{i}": "right" for i in range(8)} | {"c7": "I do not know"}
HUMAN = {f"c{i}": 5 for i in range(8)} | {"c6": 4, "c7": 1}

CHECKS = "checks:\n  - {id: trusted, metric: judge_agreement_kappa, op: '>=', threshold: 0.0}\n"


@pytest.fixture(autouse=True)
def _own_imports(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with imports_undone(MODULE):
        yield


def test_left_out_resamples_are_said_in_plain_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def by_answer(request: dict[str, object]) -> object:
        return grade(1) if "I do not know" in json.dumps(request) else grade(5)

    with FakeOpenAI(responder=by_answer) as api:
        (tmp_path / f"{MODULE}.py").write_text(answer_target(ANSWERS))
        lines = [
            f"- {{id: {c}, query: 'q {c}?', expected: x, human_grade: {g}}}"
            for c, g in HUMAN.items()
        ]
        (tmp_path / "goldens.yaml").write_text("\n".join(lines) + "\n")
        (tmp_path / "checks.yaml").write_text(CHECKS)
        config = openai_judge_config(
            MODULE,
            api.openai_base_url,
            model="gpt-test-judge",
            metrics="helpfulness, judge_agreement_kappa",
            goldens="goldens.yaml",
        )
        (tmp_path / "evalkit.yaml").write_text(config)
        code = main(["gate", "-c", str(tmp_path / "evalkit.yaml")])
    out = " ".join(capsys.readouterr().out.split())
    assert code == 0, out
    assert "with no variation dropped" not in out
    assert "2,000 resamples); " in out
    assert "(35%) drew grades that did not vary (κ and ρ undefined) and were left out" in out
    assert ": a rough interval, not a 95% one; grade more cases" in out
