"""`provider: openai` in evalkit.yaml: `evalkit run` grades through a loopback Chat
Completions server, replays offline with --judge-cache-only, and bad settings exit 2."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.openai_server import FakeOpenAI, grade
from helpers import cli
from helpers.artefact_docs import load_artefact
from helpers.cli import answer_target

TARGET = answer_target({"a": "Paris", "b": "I do not know"})

GOLDENS = (
    '{"id": "a", "query": "Capital of France?", "expected": "Paris"}\n'
    '{"id": "b", "query": "Capital of Italy?", "expected": "Rome"}\n'
)

CHECKS = """\
checks:
  - id: helpful_enough
    metric: helpfulness
    op: ">="
    threshold: 1.0
"""

CONFIG = """\
goldens: goldens.jsonl
checks: checks.yaml
metrics: [helpfulness, exact_match]
target:
  python: "qa_target:make_target"
judge:
  metric: helpfulness
  provider: openai
  base_url: {base_url}
  model: gpt-test-judge
  rubric: "5 if the answer matches the expected answer, 1 if it is wrong."
  cache_path: cache/judge.json
  prices: {{input: 1.0, output: 5.0}}
"""


@pytest.fixture
def api() -> Iterator[FakeOpenAI]:
    def by_answer(request: dict[str, object]) -> object:
        return grade(1, "wrong") if "I do not know" in json.dumps(request) else grade(5, "ok")

    with FakeOpenAI(responder=by_answer) as server:
        yield server


@pytest.fixture
def project(tmp_path: Path, api: FakeOpenAI) -> Path:
    (tmp_path / "qa_target.py").write_text(TARGET)
    (tmp_path / "goldens.jsonl").write_text(GOLDENS)
    (tmp_path / "checks.yaml").write_text(CHECKS)
    (tmp_path / "evalkit.yaml").write_text(CONFIG.format(base_url=api.openai_base_url))
    return tmp_path


def evalkit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return cli.evalkit(*args, cwd=cwd, env={"OPENAI_API_KEY": "test"})


def test_run_grades_through_chat_completions_and_replays(api: FakeOpenAI, project: Path) -> None:
    result = evalkit("run", "--out", "run.json", cwd=project)
    assert result.returncode == 0, result.stderr
    assert len(api.completion_requests) == 2
    doc = load_artefact(project / "run.json")
    rows = {row["id"]: row for row in doc["rows"]}
    assert rows["a"]["metrics"] == {"helpfulness": 5.0, "exact_match": 1.0}
    assert rows["b"]["metrics"] == {"helpfulness": 1.0, "exact_match": 0.0}
    assert rows["a"]["meta"]["helpfulness_cost_usd"] == pytest.approx((150 + 25 * 5) / 1e6)
    replay = evalkit("gate", "--judge-cache-only", cwd=project)
    assert replay.returncode == 0, replay.stderr
    assert len(api.completion_requests) == 2


def test_a_wire_setting_on_the_anthropic_provider_is_refused_with_its_line(
    project: Path,
) -> None:
    config = project / "evalkit.yaml"
    config.write_text(config.read_text().replace("  provider: openai\n", ""))
    result = evalkit("run", "--out", "x.json", cwd=project)
    assert result.returncode == 2
    assert "evalkit.yaml:" in result.stderr
    assert "base_url applies to provider 'openai' only" in result.stderr
    assert "Traceback" not in result.stderr


# --- judge-human agreement: a threshold check on it, and the report line ----------------

HUMAN = {"a": 5, "b": 1, "c": 4, "d": 2}  # the judge gives 5 1 5 1: κ = 12/13, by hand

AGREE_TARGET = answer_target(
    {"a": "Paris", "b": "I do not know", "c": "Berlin", "d": "I do not know"}
)

AGREE_CONFIG = CONFIG.replace("goldens.jsonl", "goldens.yaml").replace(
    "exact_match]", "judge_agreement_kappa]"
)

AGREE_CHECKS = """\
checks:
  - id: judge_trusted
    metric: judge_agreement_kappa
    op: ">="
    threshold: {threshold}
"""


def agreement_project(tmp_path: Path, api: FakeOpenAI, threshold: float) -> Path:
    (tmp_path / "qa_target.py").write_text(AGREE_TARGET)
    lines = [
        f"- {{id: {cid}, query: 'question {cid}?', expected: x, human_grade: {g}}}"
        for cid, g in HUMAN.items()
    ]
    (tmp_path / "goldens.yaml").write_text("\n".join(lines) + "\n")
    (tmp_path / "checks.yaml").write_text(AGREE_CHECKS.format(threshold=threshold))
    (tmp_path / "evalkit.yaml").write_text(AGREE_CONFIG.format(base_url=api.openai_base_url))
    return tmp_path


def test_gate_passes_and_reports_the_agreement(api: FakeOpenAI, tmp_path: Path) -> None:
    root = agreement_project(tmp_path, api, threshold=0.9)
    result = evalkit("gate", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "judge_trusted" in result.stdout
    assert "judge-human agreement on 4 case(s)" in result.stdout
    assert "0.92" in result.stdout


def test_gate_blocks_when_the_judge_disagrees_with_people(api: FakeOpenAI, tmp_path: Path) -> None:
    root = agreement_project(tmp_path, api, threshold=0.95)
    result = evalkit("gate", cwd=root)
    assert result.returncode == 1, result.stdout + result.stderr


def test_a_model_the_server_does_not_serve_stops_the_run_before_any_case(
    api: FakeOpenAI, project: Path
) -> None:
    api.models = ("some-other-model",)
    result = evalkit("run", "--out", "x.json", cwd=project)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "does not serve this model" in result.stderr
    assert api.completion_requests == []
