"""Judge self-consistency: with `repeats: k` the first trial of each judged case is graded twice,
by a real second call with its own cache entry, and the run reports how well the two grades
agree (weighted κ and Spearman's ρ with bootstrap intervals)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from evalkit import GoldenCase
from evalkit._model.registry import register_metric
from evalkit._model.results import CaseResult
from evalkit.metrics.judge import LLMJudge
from evalkit.metrics.judge_consistency import consistency_notes, regrade_pairs, regrading
from evalkit.targets.base import TargetResponse
from fakes import anthropic_server, openai_server
from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI
from helpers.artefact_docs import load_artefact
from helpers.cli import answer_target, evalkit, write_files

# The judge's first and second grade of each answer: they differ on case c only.
FIRST = {"a": 5, "b": 1, "c": 4, "d": 2}
SECOND = {"a": 5, "b": 1, "c": 3, "d": 2}
ANSWERS = {cid: f"answer-of-{cid}" for cid in FIRST}
# By hand, quadratic κ of (5,1,4,2) vs (5,1,3,2): observed Σ(x-y)² = 1; expected
# Σx² + Σy² - 2·Σx·Σy/n = 46 + 39 - 2·12·11/4 = 19; κ = 1 - 1/19 = 18/19.  The two
# orders of the grades are the same, so Spearman's ρ = 1.
KAPPA = 18 / 19

Render = Callable[[int, str], Any]


def second_time_differs(reply: Callable[..., Any]) -> Callable[[dict[str, Any]], Any]:
    """A responder grading an answer FIRST the first time it is asked, SECOND afterwards."""
    seen: Counter[str] = Counter()

    def respond(request: dict[str, Any]) -> Any:
        text = json.dumps(request, sort_keys=True)
        cid = next(c for c, answer in ANSWERS.items() if answer in text)
        seen[text] += 1
        grades = FIRST if seen[text] == 1 else SECOND
        return reply(grades[cid], f"grade {seen[text]}")

    return respond


# --- the judge itself ---------------------------------------------------------------------


def test_a_regrade_is_a_second_call_with_its_own_cache_entry(tmp_path: Path) -> None:
    case = GoldenCase(id="c", query="q", expected="x")
    response = TargetResponse(text=ANSWERS["c"])
    cache = tmp_path / "judge.json"
    with FakeAnthropic(responder=second_time_differs(anthropic_server.grade)) as api:
        client = api.client()
        judge = LLMJudge("rubric", "claude-test", cache_path=cache, client=client)
        plain_key = judge.cache_key(response, case)
        judge.regrade = True
        grade = judge.grade(response, case)
        assert (grade.score, grade.regrade and grade.regrade.score) == (4, 3)
        assert len(api.message_requests) == 2  # a real second call, not a cache hit
        assert judge.cache_key(response, case) == plain_key  # attempt 1's key is unchanged
        assert judge.cache_key(response, case, 2) != plain_key
        assert len(json.loads(cache.read_text())["entries"]) == 2
        assert judge.last_grade("c") == grade  # the regrade never stands in for the grade
        meta = grade.as_meta(prefix="help")
        assert (meta["help_score"], meta["help_regrade_score"]) == (4, 3)
        assert meta["help_regrade_cached"] is False
        assert judge.api_calls == 2
        client.close()
        # replayed from the cache only: both grades, no request
        replay = LLMJudge("rubric", "claude-test", cache_path=cache, cache_only=True)
        replay.regrade = True
        again = replay.grade(response, case)
        assert (again.score, again.regrade and again.regrade.score) == (4, 3)
        assert again.cached
        assert again.regrade is not None
        assert again.regrade.cached
        assert len(api.message_requests) == 2


def test_a_regrade_missing_from_the_cache_says_so_under_cache_only(tmp_path: Path) -> None:
    from evalkit.errors import JudgeError

    case = GoldenCase(id="c", query="q", expected="x")
    response = TargetResponse(text=ANSWERS["c"])
    cache = tmp_path / "judge.json"
    with FakeAnthropic() as api:
        client = api.client()
        LLMJudge("rubric", "claude-test", cache_path=cache, client=client).grade(response, case)
        client.close()
    replay = LLMJudge("rubric", "claude-test", cache_path=cache, cache_only=True)
    assert replay.grade(response, case).score == 4  # the first grade replays as before
    replay.regrade = True
    with pytest.raises(JudgeError, match=r"case 'c' \(grade 2, for self-consistency\) is not"):
        replay.grade(response, case)


def test_regrading_switches_the_judges_of_the_listed_metrics_only_within_the_block() -> None:
    judge = LLMJudge("rubric", "claude-test")
    register_metric("consistency_probe", higher_is_better=True)(judge)  # conftest isolates
    states: list[bool] = []
    with regrading(["consistency_probe", "exact_match", "no_such_metric"]):
        states.append(judge.regrade)
    states.append(judge.regrade)
    with regrading(["consistency_probe"], on=False):
        states.append(judge.regrade)
    assert states == [True, False, False]


def rows_with(first: dict[str, int], second: dict[str, int]) -> list[CaseResult]:
    rows = []
    for cid in first:
        meta = {"help_score": first[cid], "help_regrade_score": second[cid]}
        rows.append(CaseResult(cid, TargetResponse(text="x", meta=meta), {"help": 1.0}))
    rows.append(CaseResult("failed", None, {}, error="boom"))  # no grades: left out
    return rows


def test_the_report_line_has_the_hand_computed_agreement() -> None:
    rows = rows_with(FIRST, SECOND)
    assert regrade_pairs(rows, "help") == ([5.0, 1.0, 4.0, 2.0], [5.0, 1.0, 3.0, 2.0])
    (note,) = consistency_notes(rows, ["help"], seed=1)
    assert note.startswith(
        "help: judge self-consistency (the first trial's answer graded twice, 3 of 4 grade(s) "
        "identical): agreement of the two grades on 4 case(s): weighted κ (quadratic) "
        f"{KAPPA:.2f} ["
    )
    assert "Spearman ρ 1.00 [" in note
    assert consistency_notes(rows, ["other_judge"]) == []
    constant = consistency_notes(rows_with({"a": 3, "b": 3}, {"a": 3, "b": 3}), ["help"])
    assert constant[0].startswith("help: judge self-consistency (the first trial's answer graded")
    assert "2 of 2 grade(s) identical" in constant[0]
    assert "not computed" in constant[0]


# --- end to end: evalkit.yaml, both providers, replayed offline ---------------------------

GOLDENS = "".join(
    json.dumps({"id": cid, "query": f"question {cid}?", "expected": "x"}) + "\n" for cid in FIRST
)
CONFIG = """\
goldens: goldens.jsonl
checks: checks.yaml
metrics: [helpfulness]
repeats: 2
target:
  python: "qa_target:make_target"
judge:
  metric: helpfulness
  model: test-judge
  rubric: "5 if the answer is right, 1 if it is wrong."
  cache_path: cache/judge.json
{wire}"""
CHECKS = "checks:\n  - {id: some_help, metric: helpfulness, op: '>=', threshold: 1.0}\n"


@pytest.fixture(params=["anthropic", "openai"])
def provider(request: pytest.FixtureRequest) -> Iterator[tuple[str, FakeAnthropic, dict[str, str]]]:
    if request.param == "anthropic":
        with FakeAnthropic(responder=second_time_differs(anthropic_server.grade)) as api:
            env = {"ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": "test-key"}
            yield "", api, env
    else:
        with FakeOpenAI(
            responder=second_time_differs(openai_server.grade), models=("test-judge",)
        ) as oai:
            wire = f"  provider: openai\n  base_url: {oai.openai_base_url}\n"
            yield wire, oai, {"OPENAI_API_KEY": "test"}


def test_a_repeated_run_reports_the_judges_self_consistency_and_replays_it(
    tmp_path: Path, provider: tuple[str, FakeAnthropic, dict[str, str]]
) -> None:
    wire, api, env = provider
    write_files(
        tmp_path,
        {
            "qa_target.py": answer_target(ANSWERS),
            "goldens.jsonl": GOLDENS,
            "checks.yaml": CHECKS,
            "evalkit.yaml": CONFIG.format(wire=wire),
        },
    )

    def graded() -> int:
        return sum(r.method == "POST" for r in api.requests)

    first = evalkit("gate", "--out", "run.json", cwd=tmp_path, env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    # 4 answers graded twice; the second trial's identical answers are cache hits
    assert graded() == 8
    # the note, wrapped to the terminal's width: read as one paragraph
    flat = " ".join(first.stdout.split())
    start = flat.index("helpfulness: judge self-consistency")
    line = flat[start : flat.index(")", flat.index("resamples", start)) + 1]
    assert "3 of 4 grade(s) identical" in line
    assert f"weighted κ (quadratic) {KAPPA:.2f} [" in line
    assert "Spearman ρ 1.00 [" in line
    rows = {r["id"]: r for r in load_artefact(tmp_path / "run.json")["rows"]}
    assert rows["c"]["meta"]["helpfulness_score"] == 4
    assert rows["c"]["meta"]["helpfulness_regrade_score"] == 3
    entries = json.loads((tmp_path / "cache" / "judge.json").read_text())["entries"]
    assert len(entries) == 8

    replay = evalkit("gate", "--judge-cache-only", cwd=tmp_path, env=env)
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert graded() == 8  # nothing new was paid for
    assert line in " ".join(replay.stdout.split())
