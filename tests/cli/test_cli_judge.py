"""The LLM judge end to end: evalkit.yaml → `evalkit gate` → the real anthropic SDK → a
loopback Messages API, with usage and cost in each row and a cache that replays offline."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.anthropic_server import FakeAnthropic, grade
from helpers import cli
from helpers.artefact_docs import load_artefact

TARGET = """
from evalkit import CallableTarget

ANSWERS = {"a": "Paris", "b": "Berlin", "c": "I do not know"}


def make_target():
    return CallableTarget(lambda case: ANSWERS[case.id], name="qa-bot")
"""

GOLDENS = (
    '{"id": "a", "query": "Capital of France?", "expected": "Paris"}\n'
    '{"id": "b", "query": "Capital of Germany?", "expected": "Berlin"}\n'
    '{"id": "c", "query": "Capital of Italy?", "expected": "Rome"}\n'
)

CHECKS = """\
checks:
  - id: helpful_enough
    metric: helpfulness
    op: ">="
    threshold: 3.0
"""

CONFIG = """\
goldens: goldens.jsonl
checks: checks.yaml
metrics: [helpfulness]
target:
  python: "qa_target:make_target"
judge:
  metric: helpfulness
  model: claude-test-judge
  rubric: "5 if the answer matches the expected answer, 1 if it is wrong."
  scale: 5
  cache_path: cache/judge.json
  prices: {input: 1.0, output: 5.0}
"""


@pytest.fixture
def api() -> Iterator[FakeAnthropic]:
    def by_answer(request: dict[str, object]) -> object:
        prompt = json.dumps(request)
        return grade(1, "wrong") if "I do not know" in prompt else grade(5, "correct")

    with FakeAnthropic(responder=by_answer) as server:  # type: ignore[arg-type]
        yield server


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "qa_target.py").write_text(TARGET)
    (tmp_path / "goldens.jsonl").write_text(GOLDENS)
    (tmp_path / "checks.yaml").write_text(CHECKS)
    (tmp_path / "evalkit.yaml").write_text(CONFIG)
    return tmp_path


def evalkit(api: FakeAnthropic, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": "test-key"}
    return cli.evalkit(*args, cwd=cwd, env=env)


def test_judge_grades_through_the_real_sdk_and_records_usage(
    api: FakeAnthropic, project: Path
) -> None:
    result = evalkit(api, "run", "--out", "run.json", cwd=project)
    assert result.returncode == 0, result.stderr
    assert len(api.message_requests) == 3
    first = api.message_requests[0]
    assert first.body is not None
    assert first.body["model"] == "claude-test-judge"
    assert first.body["tool_choice"]["type"] == "tool"
    sent_key = first.headers.get("x-api-key") or first.headers.get("authorization", "")
    assert sent_key.endswith("test-key")
    doc = load_artefact(project / "run.json")
    rows = {row["id"]: row for row in doc["rows"]}
    assert rows["a"]["metrics"]["helpfulness"] == 5.0
    assert rows["c"]["metrics"]["helpfulness"] == 1.0
    meta = rows["a"]["meta"]
    assert meta["helpfulness_input_tokens"] > 0
    assert meta["helpfulness_cost_usd"] > 0
    assert doc["metrics"]["helpfulness"]["judge"]["model"] == "claude-test-judge"


def test_cached_grades_replay_offline_with_judge_cache_only(
    api: FakeAnthropic, project: Path
) -> None:
    assert evalkit(api, "run", "--out", "one.json", cwd=project).returncode == 0
    calls = len(api.message_requests)
    replay = evalkit(api, "gate", "--judge-cache-only", cwd=project)
    assert replay.returncode == 0, replay.stderr
    assert len(api.message_requests) == calls  # nothing new was paid for
    assert "helpful_enough" in replay.stdout


def test_judge_cache_only_miss_fails_the_case_loudly(api: FakeAnthropic, project: Path) -> None:
    result = evalkit(api, "run", "--judge-cache-only", "--out", "x.json", cwd=project)
    # No cache file at all: refused as bad input (exit 2) before the target runs
    # (tests/cli/test_judge_cache_only_preflight.py); a miss in an existing cache is exit 3.
    assert result.returncode == 2
    assert api.message_requests == []
    assert "judge-cache-only" in result.stderr
    assert "Traceback" not in result.stderr


def test_gate_blocks_when_the_judge_scores_low(api: FakeAnthropic, project: Path) -> None:
    (project / "checks.yaml").write_text(CHECKS.replace("3.0", "4.5"))
    result = evalkit(api, "gate", cwd=project)
    assert result.returncode == 1, result.stderr
    assert "helpful_enough" in result.stdout
