"""Judge money and time through the CLI, with the real anthropic SDK and a loopback API.

* ``--judge-cache-only`` holds for a judge a plugin registers the docs/judges.md way, not
  only for the ``judge:`` config block: not one request reaches the API.
* Credentials, reachability and the judge cache are checked once, before the target
  runs: a missing or refused key, an unreachable API and a corrupt, hostile or
  unwritable cache each end in one stderr line naming the culprit, and the target
  (counted through a log file) is never called.
* An unreachable API fails fast by construction: a refused connection with one
  probe retry, not minutes of per-case SDK retries.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.anthropic_server import FakeAnthropic, grade, unused_port
from helpers import cli
from helpers.tiny_project import one_line_error

TARGET = """
from evalkit import CallableTarget

ANSWERS = {"a": "Paris", "b": "Berlin", "c": "I do not know"}


def make_target():
    def answer(case):
        with open("target-calls.log", "a") as fh:
            fh.write(case.id + "\\n")
        return ANSWERS[case.id]
    return CallableTarget(answer, name="qa-bot")
"""

# The docs/judges.md way: a plugin builds the judge and registers it itself.
PLUGIN = """
from evalkit import register_metric
from evalkit.metrics import LLMJudge

judge = LLMJudge(
    rubric="Score 5 if the answer is correct and complete, 1 if it is wrong.",
    model="claude-plugin-judge",
    scale=5,
    cache_path={cache_path!r},
)
register_metric("helpfulness", higher_is_better=True)(judge)
"""

GOLDENS = (
    '{"id": "a", "query": "Capital of France?", "expected": "Paris"}\n'
    '{"id": "b", "query": "Capital of Germany?", "expected": "Berlin"}\n'
    '{"id": "c", "query": "Capital of Italy?", "expected": "Rome"}\n'
)

CHECKS = "checks:\n  - id: helpful\n    metric: helpfulness\n    op: '>='\n    threshold: 1.0\n"

CONFIG = """\
goldens: goldens.jsonl
checks: checks.yaml
metrics: [helpfulness]
plugins: [judge_plugin]
target:
  python: "qa_target:make_target"
"""

CACHE = "cache/judge.json"


@pytest.fixture
def api() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(default=grade(5, "correct"), accepted_key="right-key") as server:
        yield server


def write_project(root: Path, cache_path: str | None = CACHE) -> Path:
    (root / "qa_target.py").write_text(TARGET)
    (root / "judge_plugin.py").write_text(PLUGIN.format(cache_path=cache_path))
    (root / "goldens.jsonl").write_text(GOLDENS)
    (root / "checks.yaml").write_text(CHECKS)
    (root / "evalkit.yaml").write_text(CONFIG)
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path)


def evalkit(
    *args: str, cwd: Path, base_url: str, key: str | None = "right-key"
) -> subprocess.CompletedProcess[str]:
    env = {"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": key, "ANTHROPIC_AUTH_TOKEN": None}
    return cli.evalkit(*args, cwd=cwd, env=env)


def target_calls(project: Path) -> list[str]:
    log = project / "target-calls.log"
    return log.read_text().split() if log.exists() else []


# ---------------------------------------------------------------- cache-only everywhere


def test_cache_only_holds_for_a_judge_a_plugin_registered(
    api: FakeAnthropic, project: Path
) -> None:
    result = evalkit("run", "--judge-cache-only", "--out", "x.json", cwd=project, **url(api))
    assert result.returncode == 3, result.stderr
    assert "not in the judge cache" in result.stderr
    assert "Traceback" not in result.stderr
    assert api.requests == []  # not a grade, not even the pre-flight lookup


def test_cache_only_replays_a_plugin_judges_grades_without_any_request(
    api: FakeAnthropic, project: Path
) -> None:
    paid = evalkit("run", "--out", "one.json", cwd=project, **url(api))
    assert paid.returncode == 0, paid.stderr
    assert len(api.message_requests) == 3
    before = len(api.requests)
    replay = evalkit("gate", "--judge-cache-only", cwd=project, **url(api), key=None)
    assert replay.returncode == 0, replay.stderr
    assert len(api.requests) == before


def test_cache_only_with_a_judge_without_a_cache_is_refused_up_front(
    api: FakeAnthropic, tmp_path: Path
) -> None:
    project = write_project(tmp_path, cache_path=None)
    result = evalkit("run", "--judge-cache-only", cwd=project, **url(api))
    one_line_error(result, 2, "claude-plugin-judge", "needs a judge cache", "no cache_path")
    assert target_calls(project) == []
    assert api.requests == []


# ----------------------------------------------------------------------- credentials


def test_a_missing_api_key_is_one_line_naming_the_variable(
    api: FakeAnthropic, project: Path
) -> None:
    result = evalkit("run", "--out", "x.json", cwd=project, **url(api), key=None)
    one_line_error(result, 2, "claude-plugin-judge", "ANTHROPIC_API_KEY", "--judge-cache-only")
    assert target_calls(project) == []
    assert api.requests == []
    assert not (project / "x.json").exists()


def test_a_refused_api_key_is_found_before_the_target_runs(
    api: FakeAnthropic, project: Path
) -> None:
    result = evalkit("run", "--out", "x.json", cwd=project, **url(api), key="wrong-key")
    one_line_error(result, 2, "refused the key", "HTTP 401", "ANTHROPIC_API_KEY")
    assert target_calls(project) == []
    assert api.message_requests == []


def test_an_unreachable_api_fails_fast_with_one_line(project: Path) -> None:
    base_url = f"http://127.0.0.1:{unused_port()}"
    result = evalkit("gate", cwd=project, base_url=base_url, key="some-key")
    one_line_error(result, 3, "cannot reach the Anthropic API", base_url)
    assert target_calls(project) == []


# ----------------------------------------------------------------------- the cache


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("{not json", "invalid JSON at line 1"),
        ('{"format": "something else"}', "format is 'something else'"),
        ("[" * 100_000 + "]" * 100_000, "invalid JSON at line 1"),
    ],
    ids=["not-json", "wrong-format", "nested-too-deep"],
)
def test_a_corrupt_cache_is_found_before_the_target_runs(
    api: FakeAnthropic, project: Path, content: str, needle: str
) -> None:
    cache = project / CACHE
    cache.parent.mkdir()
    cache.write_text(content)
    result = evalkit("run", "--out", "x.json", cwd=project, **url(api))
    one_line_error(result, 2, str(Path(CACHE)), "corrupt", needle)
    assert target_calls(project) == []
    assert api.requests == []
    assert cache.read_text() == content  # never reset behind the user's back


def test_a_cache_path_through_a_file_is_found_before_the_target_runs(
    api: FakeAnthropic, tmp_path: Path
) -> None:
    project = write_project(tmp_path, cache_path="taken.json/judge.json")
    (project / "taken.json").write_text("precious")
    result = evalkit("run", "--out", "x.json", cwd=project, **url(api))
    one_line_error(result, 2, "taken.json/judge.json", "taken.json is a file")
    assert target_calls(project) == []
    assert (project / "taken.json").read_text() == "precious"


def url(api: FakeAnthropic) -> dict[str, str]:
    return {"base_url": api.base_url}


def test_the_configured_judge_block_is_checked_the_same_way(
    api: FakeAnthropic, project: Path
) -> None:
    config = CONFIG.replace("plugins: [judge_plugin]\n", "") + json.dumps(
        {"judge": {"metric": "helpfulness", "model": "claude-config-judge", "rubric": "r"}}
    ).replace('{"judge": ', "judge: ").removesuffix("}")
    (project / "evalkit.yaml").write_text(config + "\n")
    result = evalkit("run", cwd=project, **url(api), key=None)
    one_line_error(result, 2, "claude-config-judge", "ANTHROPIC_API_KEY")
    assert target_calls(project) == []


def test_a_hand_edited_grade_outside_the_scale_is_refused_not_replayed(
    api: FakeAnthropic, project: Path
) -> None:
    assert evalkit("run", "--out", "one.json", cwd=project, **url(api)).returncode == 0
    cache = project / CACHE
    doc = json.loads(cache.read_text())
    for entry in doc["entries"].values():
        entry["score"] = 99
    cache.write_text(json.dumps(doc))
    result = evalkit("run", "--judge-cache-only", "--out", "two.json", cwd=project, **url(api))
    one_line_error(result, 2, str(Path(CACHE)), "score 99", "outside 1..5")
    assert not (project / "two.json").exists()


def test_a_cache_saved_with_a_byte_order_mark_still_replays(
    api: FakeAnthropic, project: Path
) -> None:
    assert evalkit("run", "--out", "one.json", cwd=project, **url(api)).returncode == 0
    cache = project / CACHE
    cache.write_bytes(b"\xef\xbb\xbf" + cache.read_bytes())
    before = len(api.requests)
    replay = evalkit("run", "--judge-cache-only", "--out", "two.json", cwd=project, **url(api))
    assert replay.returncode == 0, replay.stderr
    assert len(api.requests) == before
