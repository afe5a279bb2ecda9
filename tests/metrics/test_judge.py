"""LLMJudge against a real loopback Messages API server, driven by the real anthropic SDK."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_type_hints

import pytest

from evalkit import GoldenCase, TargetResponse, register_metric
from evalkit._app.pipeline import prepare
from evalkit._model.registry import get_metric
from evalkit._spec.config import load_config
from evalkit.errors import ConfigError, JudgeError
from evalkit.metrics import Grade, LLMJudge, TokenUsage
from evalkit.metrics.judge_base import JudgeBase, JudgeSettings
from evalkit.metrics.judge_cache import JudgeCache
from evalkit.metrics.openai_judge import OpenAIJudge
from fakes import (
    FakeAnthropic,
    Reply,
    api_error,
    error,
    grade,
    malformed,
    overloaded,
    text_only,
    tool_call,
    unused_port,
)

if TYPE_CHECKING:  # imported where used: a heavy import, kept out of collection
    import anthropic


MODEL = "claude-haiku-4-5"
RUBRIC = "Score 5 if the answer is correct and complete, 1 if it is wrong."
CASE = GoldenCase(
    id="q-capital",
    query="What is the capital of Australia?",
    expected="Canberra",
    context={"topic": "geography"},
)
ANSWER = TargetResponse(text="Canberra is the capital.", latency_ms=120.0)


@pytest.fixture
def api() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
def client(api: FakeAnthropic) -> Iterator[anthropic.Anthropic]:
    sdk = api.client()  # imports anthropic
    yield sdk
    sdk.close()


def make_judge(client: anthropic.Anthropic, **kwargs: Any) -> LLMJudge:
    options: dict[str, Any] = {"rubric": RUBRIC, "model": MODEL, "scale": 5, "client": client}
    options.update(kwargs)
    return LLMJudge(**options)


def cache_doc(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text())
    return doc


# --- the happy path ------------------------------------------------------------------------


def test_grade_returns_score_reason_and_usage(
    api: FakeAnthropic, client: anthropic.Anthropic
) -> None:
    api.script(grade(4, "Correct but terse.", input_tokens=200, output_tokens=25))
    result = make_judge(client).grade(ANSWER, CASE)
    assert result == Grade(
        case_id="q-capital",
        score=4,
        reason="Correct but terse.",
        model=MODEL,
        cached=False,
        usage=TokenUsage(200, 25, None),
    )


def test_call_returns_the_score_as_a_float(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    api.script(grade(2))
    value = make_judge(client)(ANSWER, CASE)
    assert value == 2.0
    assert isinstance(value, float)


def test_request_forces_the_strict_grading_tool(
    api: FakeAnthropic, client: anthropic.Anthropic
) -> None:
    make_judge(client, scale=7).grade(ANSWER, CASE)
    (request,) = api.message_requests
    body = request.body
    assert body is not None
    assert body["model"] == MODEL
    assert "temperature" not in body  # recent models reject it; sent only when asked for
    assert body["tool_choice"] == {
        "type": "tool",
        "name": "record_grade",
        "disable_parallel_tool_use": True,
    }
    (tool,) = body["tools"]
    assert tool["name"] == "record_grade"
    assert tool["strict"] is True
    schema = tool["input_schema"]
    assert schema["type"] == "object"
    assert schema["required"] == ["score", "reason"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["score"]["enum"] == [1, 2, 3, 4, 5, 6, 7]
    assert schema["properties"]["reason"]["type"] == "string"
    # Strict schemas reject numeric bounds; the enum carries the range instead.
    assert "minimum" not in schema["properties"]["score"]
    assert "maximum" not in schema["properties"]["score"]


def test_explicit_temperature_goes_on_the_wire_and_into_the_identity(
    api: FakeAnthropic, client: anthropic.Anthropic
) -> None:
    judge = make_judge(client, temperature=0)
    judge.grade(ANSWER, CASE)
    body = api.message_requests[0].body
    assert body is not None
    assert body["temperature"] == 0
    default = make_judge(client)
    assert judge.fingerprint != default.fingerprint
    assert judge.cache_key(ANSWER, CASE) != default.cache_key(ANSWER, CASE)


def test_prompt_shows_rubric_query_expected_and_response_text(
    api: FakeAnthropic, client: anthropic.Anthropic
) -> None:
    make_judge(client).grade(ANSWER, CASE)
    prompt = api.message_requests[0].prompt
    for shown in (RUBRIC, CASE.query, "Canberra", ANSWER.text or ""):
        assert shown in prompt
    assert "<expected_answer>" in prompt
    assert "1 (worst) to 5 (best)" in prompt


def test_prompt_for_a_ranking_lists_the_ids_in_order(
    api: FakeAnthropic, client: anthropic.Anthropic
) -> None:
    case = GoldenCase(id="q-rank", query="pubs in newtown", relevant=frozenset({"d2"}))
    make_judge(client).grade(TargetResponse(["d9", "d2"]), case)
    prompt = api.message_requests[0].prompt
    assert "1. d9\n2. d2" in prompt
    assert "<known_relevant_ids>\nd2\n" in prompt
    assert "<expected_answer>" not in prompt  # the case has none


def test_registered_as_a_metric_and_fingerprinted_by_the_registry(
    api: FakeAnthropic, client: anthropic.Anthropic
) -> None:
    judge = make_judge(client)
    register_metric("helpfulness", higher_is_better=True)(judge)
    defn = get_metric("helpfulness")
    assert defn.fn(ANSWER, CASE) == 4.0
    first = defn.fingerprint
    # Same name, different judge (in a fresh registry): the metric's fingerprint changes.
    from evalkit._model import registry

    with registry.isolated():
        registry._case.pop("helpfulness")
        register_metric("helpfulness", higher_is_better=True)(
            make_judge(client, model="claude-sonnet-4-6")
        )
        assert get_metric("helpfulness").fingerprint != first


def test_fingerprint_tracks_model_rubric_and_scale(client: anthropic.Anthropic) -> None:
    base = make_judge(client).fingerprint
    assert make_judge(client).fingerprint == base
    assert make_judge(client, model="claude-sonnet-4-6").fingerprint != base
    assert make_judge(client, rubric=RUBRIC + " Be strict.").fingerprint != base
    assert make_judge(client, scale=10).fingerprint != base


# --- the cache -------------------------------------------------------------------------------


def test_cache_hit_makes_no_second_request(
    api: FakeAnthropic, client: anthropic.Anthropic, tmp_path: Path
) -> None:
    judge = make_judge(client, cache_path=tmp_path / "cache.json")
    first = judge.grade(ANSWER, CASE)
    again = judge.grade(TargetResponse(text=ANSWER.text, latency_ms=999.0, meta={"x": 1}), CASE)
    assert len(api.message_requests) == 1
    assert (first.cached, again.cached) == (False, True)
    assert (again.score, again.reason) == (first.score, first.reason)
    assert again.usage is None  # nothing was spent on the replay
    assert (judge.api_calls, judge.cache_hits) == (1, 1)
    assert judge.last_grade("q-capital") == again


def test_grade_of_tells_two_targets_responses_to_one_case_apart(
    api: FakeAnthropic, client: anthropic.Anthropic
) -> None:
    api.script(grade(5, "baseline answer"), grade(1, "candidate answer"))
    judge = make_judge(client)
    baseline, candidate = TargetResponse(text="Canberra."), TargetResponse(text="Sydney.")
    judge(baseline, CASE)
    judge(candidate, CASE)
    found = judge.grade_of(baseline, CASE)
    assert found is not None
    assert (found.score, found.reason) == (5, "baseline answer")
    last = judge.last_grade(CASE.id)
    assert last is not None
    assert last.score == 1
    assert judge.grade_of(TargetResponse(text="Perth."), CASE) is None
    assert len(api.message_requests) == 2


def test_cache_survives_a_new_judge_instance(
    api: FakeAnthropic, client: anthropic.Anthropic, tmp_path: Path
) -> None:
    path = tmp_path / ".evalkit" / "judge-cache.json"  # directory created on first write
    api.script(grade(3, "partly right"))
    make_judge(client, cache_path=path).grade(ANSWER, CASE)
    replay = make_judge(client, cache_path=path).grade(ANSWER, CASE)
    assert len(api.message_requests) == 1
    assert (replay.score, replay.reason, replay.cached) == (3, "partly right", True)
    (entry,) = cache_doc(path)["entries"].values()
    assert entry["case_id"] == "q-capital"
    assert entry["model"] == MODEL
    assert (entry["input_tokens"], entry["output_tokens"]) == (120, 30)


def test_cache_key_covers_judge_case_and_output_but_not_latency_or_meta(
    client: anthropic.Anthropic,
) -> None:
    judge = make_judge(client)
    key = judge.cache_key(ANSWER, CASE)
    unchanged = [
        TargetResponse(text=ANSWER.text, latency_ms=5.0),
        TargetResponse(text=ANSWER.text, latency_ms=5.0, meta={"cost_usd": 1.0}, raw={"a": 1}),
    ]
    for response in unchanged:
        assert judge.cache_key(response, CASE) == key
    changed = [
        make_judge(client, model="claude-sonnet-4-6").cache_key(ANSWER, CASE),
        make_judge(client, rubric="Another rubric.").cache_key(ANSWER, CASE),
        make_judge(client, scale=10).cache_key(ANSWER, CASE),
        judge.cache_key(TargetResponse(text="Sydney."), CASE),
        judge.cache_key(TargetResponse(["d1"], text=ANSWER.text), CASE),
        judge.cache_key(ANSWER, GoldenCase(id="other-id", query=CASE.query, expected="Canberra")),
        judge.cache_key(ANSWER, GoldenCase(id=CASE.id, query="Capital of Australia?")),
        judge.cache_key(ANSWER, GoldenCase(id=CASE.id, query=CASE.query, expected="Sydney")),
        judge.cache_key(
            ANSWER, GoldenCase(id=CASE.id, query=CASE.query, relevant=frozenset({"d1"}))
        ),
        judge.cache_key(
            ANSWER,
            GoldenCase(id=CASE.id, query=CASE.query, expected="Canberra", context={"t": "x"}),
        ),
    ]
    assert key not in changed
    assert len(set(changed)) == len(changed)


def test_ranking_key_depends_on_order(client: anthropic.Anthropic) -> None:
    judge = make_judge(client)
    case = GoldenCase(id="r", query="q")
    assert judge.cache_key(TargetResponse(["a", "b"]), case) != judge.cache_key(
        TargetResponse(["b", "a"]), case
    )


def test_model_swap_is_a_cache_miss_and_keeps_both_grades(
    api: FakeAnthropic, client: anthropic.Anthropic, tmp_path: Path
) -> None:
    path = tmp_path / "cache.json"
    api.script(grade(5, "haiku says"), grade(2, "sonnet says"))
    haiku = make_judge(client, cache_path=path).grade(ANSWER, CASE)
    sonnet = make_judge(client, model="claude-sonnet-4-6", cache_path=path).grade(ANSWER, CASE)
    assert [r.body["model"] for r in api.message_requests if r.body] == [
        MODEL,
        "claude-sonnet-4-6",
    ]
    assert (haiku.score, sonnet.score, sonnet.cached) == (5, 2, False)
    models = sorted(e["model"] for e in cache_doc(path)["entries"].values())
    assert models == ["claude-haiku-4-5", "claude-sonnet-4-6"]


def test_cache_writes_leave_no_temp_files(client: anthropic.Anthropic, tmp_path: Path) -> None:
    path = tmp_path / "cache.json"
    judge = make_judge(client, cache_path=path)
    for i in range(3):
        judge.grade(ANSWER, GoldenCase(id=f"c{i}", query=f"query {i}"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache.json", "cache.json.lock"]
    assert len(cache_doc(path)["entries"]) == 3


def test_a_failed_replace_keeps_the_old_cache_intact(
    client: anthropic.Anthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cache.json"
    judge = make_judge(client, cache_path=path)
    judge.grade(ANSWER, CASE)
    before = path.read_bytes()

    def crash(*args: object) -> None:
        raise OSError("disk full (simulated)")

    second = GoldenCase(id="c2", query="another query")
    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(JudgeError) as info:
        judge.grade(ANSWER, second)
    message = str(info.value)
    assert str(path) in message
    assert "could not write 1 new grade(s) (disk full (simulated))" in message
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache.json", "cache.json.lock"]
    # The paid-for grade was kept in memory and lands with the next successful write.
    monkeypatch.undo()
    judge.grade(ANSWER, GoldenCase(id="c3", query="a third query"))
    assert sorted(e["case_id"] for e in cache_doc(path)["entries"].values()) == [
        "c2",
        "c3",
        "q-capital",
    ]


@pytest.mark.parametrize(
    ("content", "what"),
    [
        ('{"format": "evalkit-judge-cache", "version": 1, "entries": {', "invalid JSON"),
        ("", "invalid JSON"),
        ("[1, 2]", "top level is list"),
        ('{"version": 1, "entries": {}}', "format is None"),
        ('{"format": "evalkit-judge-cache", "version": 1}', "'entries' is missing"),
        (
            '{"format": "evalkit-judge-cache", "version": 1, "entries": {"k": '
            '{"score": "4", "reason": "r", "model": "m", "case_id": "c"}}}',
            "score must be an integer",
        ),
        (
            '{"format": "evalkit-judge-cache", "version": 1, "entries": {"k": '
            '{"score": 4, "model": "m", "case_id": "c"}}}',
            "reason must be a string",
        ),
    ],
)
def test_corrupt_cache_raises_naming_the_file_and_the_fix(
    api: FakeAnthropic, client: anthropic.Anthropic, tmp_path: Path, content: str, what: str
) -> None:
    path = tmp_path / "cache.json"
    path.write_text(content)
    with pytest.raises(JudgeError) as info:
        make_judge(client, cache_path=path).grade(ANSWER, CASE)
    message = str(info.value)
    assert str(path) in message
    assert what in message
    assert "delete" in message
    assert "restore" in message
    assert "\n" not in message
    assert path.read_text() == content  # never silently reset
    assert api.message_requests == []  # and nothing paid for


def test_cache_from_another_version_is_refused(client: anthropic.Anthropic, tmp_path: Path) -> None:
    path = tmp_path / "cache.json"
    path.write_text('{"format": "evalkit-judge-cache", "version": 99, "entries": {}}')
    with pytest.raises(JudgeError, match=r"version 99.*reads version 1"):
        make_judge(client, cache_path=path).grade(ANSWER, CASE)


def test_cache_corrupted_by_someone_else_mid_run_is_not_overwritten(
    api: FakeAnthropic, client: anthropic.Anthropic, tmp_path: Path
) -> None:
    path = tmp_path / "cache.json"
    judge = make_judge(client, cache_path=path)
    judge.grade(ANSWER, CASE)
    path.write_text("garbage")
    with pytest.raises(JudgeError, match="is corrupt"):
        judge.grade(ANSWER, GoldenCase(id="c2", query="another query"))
    assert path.read_text() == "garbage"


def test_concurrent_threads_lose_no_cache_entries(
    api: FakeAnthropic, client: anthropic.Anthropic, tmp_path: Path
) -> None:
    path = tmp_path / "cache.json"
    api.default = grade(3).after(0.005)
    # Two judges with separate in-memory state, as two processes would have.
    judges = [make_judge(client, cache_path=path), make_judge(client, cache_path=path)]
    cases = [GoldenCase(id=f"c{i:02d}", query=f"query {i}") for i in range(48)]

    def work(i: int) -> Grade:
        return judges[i % 2].grade(ANSWER, cases[i])

    with ThreadPoolExecutor(max_workers=12) as pool:
        grades = list(pool.map(work, range(len(cases))))
    assert [g.case_id for g in grades] == [c.id for c in cases]
    assert api.max_in_flight > 1  # the requests really overlapped
    entries = cache_doc(path)["entries"]
    assert sorted(e["case_id"] for e in entries.values()) == [c.id for c in cases]
    # A fresh judge replays every one of them without a request.
    before = len(api.message_requests)
    fresh = make_judge(client, cache_path=path)
    assert all(fresh.grade(ANSWER, c).cached for c in cases)
    assert len(api.message_requests) == before


_WRITER = """
import sys
from evalkit.metrics.judge_cache import CachedGrade, JudgeCache
cache = JudgeCache(sys.argv[1])
for i in range(int(sys.argv[3])):
    key = f"{sys.argv[2]}-{i}"
    cache.put(key, CachedGrade(score=1, reason="r", model="m", case_id=key))
"""


def test_concurrent_processes_lose_no_cache_entries(tmp_path: Path) -> None:
    path = tmp_path / "cache.json"
    writers = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(path), name, "40"])
        for name in ("a", "b", "c")
    ]
    assert [w.wait(timeout=60) for w in writers] == [0, 0, 0]
    assert len(JudgeCache(path)) == 120


# --- replay only -----------------------------------------------------------------------------


def test_cache_only_replays_hits_and_refuses_misses(
    api: FakeAnthropic, client: anthropic.Anthropic, tmp_path: Path
) -> None:
    path = tmp_path / "cache.json"
    make_judge(client, cache_path=path).grade(ANSWER, CASE)
    replay = make_judge(client, cache_path=path, cache_only=True)
    assert replay.grade(ANSWER, CASE).cached
    with pytest.raises(JudgeError) as info:
        replay.grade(TargetResponse(text="A different answer."), CASE)
    message = str(info.value)
    assert "'q-capital'" in message
    assert f"not in the judge cache {path};" in message
    assert "rerun without --judge-cache-only" in message
    assert len(api.message_requests) == 1


def test_cache_only_miss_on_an_empty_cache_names_the_file(
    api: FakeAnthropic, client: anthropic.Anthropic, tmp_path: Path
) -> None:
    path = tmp_path / "never-written.json"
    judge = make_judge(client, cache_path=path, cache_only=True)
    assert repr(judge) == f"LLMJudge(model={MODEL!r}, scale=5, cache_path={str(path)!r})"
    with pytest.raises(JudgeError, match=f"not in the judge cache {path};"):
        judge.grade(ANSWER, CASE)
    assert api.requests == []
    assert not path.exists()  # replaying never writes


def test_cache_only_needs_a_cache_path(client: anthropic.Anthropic) -> None:
    with pytest.raises(ConfigError, match="cache_only=True needs a cache_path"):
        make_judge(client, cache_only=True)


# --- usage and cost --------------------------------------------------------------------------


def test_usage_and_cost_are_recorded_per_case_and_in_total(
    api: FakeAnthropic, client: anthropic.Anthropic
) -> None:
    api.script(
        grade(4, "a", input_tokens=1000, output_tokens=100),
        grade(2, "b", input_tokens=3000, output_tokens=200),
    )
    judge = make_judge(client, prices={"input": 1.0, "output": 5.0})
    judge.grade(ANSWER, CASE)
    judge.grade(ANSWER, GoldenCase(id="q2", query="second query"))
    first = judge.last_grade("q-capital")
    assert first is not None
    assert first.usage is not None
    assert (first.usage.input_tokens, first.usage.output_tokens) == (1000, 100)
    assert first.usage.cost_usd == pytest.approx((1000 * 1.0 + 100 * 5.0) / 1e6)
    total = judge.total_usage()
    assert (total.input_tokens, total.output_tokens) == (4000, 300)
    assert total.cost_usd == pytest.approx((4000 * 1.0 + 300 * 5.0) / 1e6)
    assert first.as_meta() == {
        "judge_score": 4,
        "judge_reason": "a",
        "judge_model": MODEL,
        "judge_cached": False,
        "judge_input_tokens": 1000,
        "judge_output_tokens": 100,
        "judge_cost_usd": pytest.approx(0.0015),
    }


def test_reply_without_usage_still_grades(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    api.script(tool_call({"score": 3, "reason": "ok"}, usage=False))
    result = make_judge(client).grade(ANSWER, CASE)
    assert (result.score, result.usage) == (3, None)
    assert "judge_input_tokens" not in result.as_meta()


# --- every way a reply can be wrong ----------------------------------------------------------


BAD_REPLIES: list[tuple[str, Reply, str]] = [
    ("text only", text_only("I'd say 4."), "no record_grade tool call"),
    ("wrong tool", tool_call({"score": 4, "reason": "r"}, name="grade"), "called tool 'grade'"),
    ("score too high", tool_call({"score": 6, "reason": "r"}), "score 6 is outside 1..5"),
    ("score zero", tool_call({"score": 0, "reason": "r"}), "score 0 is outside 1..5"),
    ("score as text", tool_call({"score": "4", "reason": "r"}), "got '4'"),
    ("score as float", tool_call({"score": 4.5, "reason": "r"}), "got 4.5"),
    ("score as bool", tool_call({"score": True, "reason": "r"}), "got True"),
    ("no score", tool_call({"reason": "r"}), "lacks score"),
    ("no reason", tool_call({"score": 4}), "lacks reason"),
    ("reason not text", tool_call({"score": 4, "reason": 7}), "reason must be a string"),
    ("extra field", tool_call({"score": 4, "reason": "r", "x": 1}), "unexpected fields ['x']"),
    ("input not object", tool_call(["score", 4]), "input is not an object"),
    ("529 overloaded", overloaded(), "HTTP 529 overloaded_error: Overloaded"),
    ("500 api error", api_error(), "HTTP 500 api_error: Internal server error"),
    ("401", error(401, "authentication_error", "invalid x-api-key"), "HTTP 401"),
    ("truncated JSON body", malformed(), "not valid JSON"),
    ("HTML body", malformed(b"<html>bad gateway</html>", "text/html"), "no content blocks"),
    ("JSON but not a message", malformed(b'{"ok": true}'), "no content blocks"),
]


@pytest.mark.parametrize(
    ("reply", "expected"), [(r, e) for _, r, e in BAD_REPLIES], ids=[n for n, _, _ in BAD_REPLIES]
)
def test_bad_reply_raises_judge_error_naming_case_and_model(
    api: FakeAnthropic, client: anthropic.Anthropic, tmp_path: Path, reply: Reply, expected: str
) -> None:
    api.script(reply)
    path = tmp_path / "cache.json"
    judge = make_judge(client, cache_path=path)
    with pytest.raises(JudgeError) as info:
        judge(ANSWER, CASE)
    message = str(info.value)
    assert "'q-capital'" in message
    assert MODEL in message
    assert expected in message
    assert "\n" not in message
    assert not path.exists()  # a failure is never cached
    assert judge.last_grade("q-capital") is None


def test_connection_refused_raises_judge_error_naming_the_case() -> None:
    import anthropic

    dead = f"http://127.0.0.1:{unused_port()}"
    client = anthropic.Anthropic(base_url=dead, api_key="test", max_retries=0)
    with client, pytest.raises(JudgeError) as info:
        make_judge(client).grade(ANSWER, CASE)
    message = str(info.value)
    assert "'q-capital'" in message
    assert "could not reach the Anthropic API" in message
    assert dead in message


def test_a_failure_is_retried_when_max_retries_allows(
    api: FakeAnthropic, client: anthropic.Anthropic
) -> None:
    api.script(overloaded(), grade(5, "after a retry"))
    result = make_judge(client, max_retries=1).grade(ANSWER, CASE)
    assert (result.score, result.reason) == (5, "after a retry")
    assert len(api.message_requests) == 2


def test_injected_client_retries_are_left_alone_by_default(
    api: FakeAnthropic, client: anthropic.Anthropic
) -> None:
    api.script(overloaded(), grade(5))
    with pytest.raises(JudgeError, match="HTTP 529"):
        make_judge(client).grade(ANSWER, CASE)  # the client says max_retries=0
    assert len(api.message_requests) == 1


# --- construction ----------------------------------------------------------------------------


def test_model_is_required() -> None:
    with pytest.raises(TypeError, match="model"):
        LLMJudge(rubric=RUBRIC)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"model": ""}, "model must be a non-empty string"),
        ({"model": None}, "model must be a non-empty string"),
        ({"rubric": "  "}, "rubric must be a non-empty string"),
        ({"scale": 1}, "scale must be an integer from 2"),
        ({"scale": True}, "scale must be an integer from 2"),
        ({"scale": "5"}, "scale must be an integer from 2"),
        ({"temperature": 2}, "temperature must be a number from 0 to 1 or None"),
        ({"max_tokens": 10}, "max_tokens must be an integer >= 64"),
        ({"max_retries": -1}, "max_retries must be an integer >= 0"),
        ({"timeout_s": 0}, "timeout_s must be a positive number"),
        ({"prices": {"input": 1.0}}, "exactly the keys 'input' and 'output'"),
        ({"prices": {"input": 1.0, "output": -2}}, "prices\\['output'\\] must be a finite number"),
    ],
)
def test_bad_arguments_are_refused_with_the_argument_named(
    kwargs: dict[str, Any], expected: str
) -> None:
    options: dict[str, Any] = {"rubric": RUBRIC, "model": MODEL}
    options.update(kwargs)
    with pytest.raises(ConfigError, match=expected):
        LLMJudge(**options)


def test_the_shared_settings_are_exactly_the_base_judges_keywords() -> None:
    keywords = inspect.signature(JudgeBase.__init__).parameters.values()
    named = {p.name for p in keywords if p.kind is p.KEYWORD_ONLY} - {"system"}
    assert set(get_type_hints(JudgeSettings)) == named


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_every_shared_setting_reaches_the_judge(provider: str, tmp_path: Path) -> None:
    waits: list[float] = []
    settings: JudgeSettings = {
        "max_tokens": 100,
        "temperature": 0.5,
        "max_retries": 3,
        "timeout_s": 7.0,
        "prices": {"input": 1, "output": 2},
        "cache_only": True,
        "rate_limit_wait_s": 5.0,
        "sleep": waits.append,
    }
    cache = tmp_path / "cache.json"
    judge: JudgeBase = (
        LLMJudge(RUBRIC, MODEL, 4, cache, **settings)
        if provider == "anthropic"
        else OpenAIJudge(RUBRIC, MODEL, 4, cache, **settings)
    )
    assert (judge.scale, judge.max_tokens, judge.temperature) == (4, 100, 0.5)
    assert (judge.max_retries, judge.timeout_s, judge.cache_only) == (3, 7.0, True)
    assert judge.prices == {"input": 1.0, "output": 2.0}
    assert judge.cache is not None
    assert judge.cache.path == cache
    assert judge.rate_limit_budget.wait(1.0)
    assert waits == [1.0]


def test_cache_path_that_is_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a directory"):
        LLMJudge(RUBRIC, MODEL, cache_path=tmp_path)


def test_default_client_is_built_lazily_from_the_environment(
    api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-env-key")
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    judge = LLMJudge(RUBRIC, MODEL)
    assert api.requests == []  # constructing it touched nothing
    assert judge(ANSWER, CASE) == 4.0
    (request,) = api.message_requests
    assert "test-env-key" in (
        request.headers.get("x-api-key", "") + request.headers.get("authorization", "")
    )


def test_importing_evalkit_does_not_import_the_sdk() -> None:
    code = "import sys, evalkit, evalkit.metrics; sys.exit('anthropic' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_judge_threads_share_one_lazily_built_client(
    api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    import anthropic

    built: list[object] = []
    real = anthropic.Anthropic

    def counting(*args: Any, **kwargs: Any) -> anthropic.Anthropic:
        client = real(*args, **kwargs)
        built.append(client)
        return client

    monkeypatch.setattr(anthropic, "Anthropic", counting)
    judge = LLMJudge(RUBRIC, MODEL)
    barrier = threading.Barrier(6)

    def work(i: int) -> float:
        barrier.wait()
        return judge(ANSWER, GoldenCase(id=f"t{i}", query="q"))

    with ThreadPoolExecutor(max_workers=6) as pool:
        assert list(pool.map(work, range(6))) == [4.0] * 6
    assert len(built) == 1


# --- 429: waited out within rate_limit_wait_s (opt-in), like the OpenAI-compatible judge ---
# The SDK client has max_retries=0, so only the judge's own loop waits; waits are recorded,
# never slept, so no test depends on timing.


def limited(retry_after: str | None) -> Reply:
    headers = {} if retry_after is None else {"retry-after": retry_after}
    return error(
        429, "rate_limit_error", "Number of requests has exceeded your rate limit", headers
    )


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def judge(client: anthropic.Anthropic, sleeps: Sleeps, budget: float = 0.0) -> LLMJudge:
    return make_judge(client, rate_limit_wait_s=budget, sleep=sleeps)


def test_a_429_fails_at_once_by_default_and_says_how_to_opt_in(
    api: FakeAnthropic, client: anthropic.Anthropic
) -> None:
    api.script(limited("7"))
    sleeps = Sleeps()
    with pytest.raises(JudgeError) as info:
        judge(client, sleeps).grade(ANSWER, CASE)
    text = str(info.value)
    assert "\n" not in text
    assert "HTTP 429 rate_limit_error" in text
    assert "it asked to wait 7 s: set rate_limit_wait_s" in text
    assert sleeps == []
    assert len(api.message_requests) == 1


def test_retry_after_is_waited_out_within_the_budget(
    api: FakeAnthropic, client: anthropic.Anthropic
) -> None:
    api.script(limited("7"), limited("7"), grade(5, "right"))
    sleeps = Sleeps()
    grader = judge(client, sleeps, budget=20)
    assert grader.grade(ANSWER, CASE).score == 5
    assert sleeps == [7.0, 7.0]
    assert len(api.message_requests) == 3
    assert grader.rate_limit_budget.left_s == 6.0


def test_a_wait_that_does_not_fit_is_not_started(
    api: FakeAnthropic, client: anthropic.Anthropic
) -> None:
    api.script(limited("7"), limited("7"))
    sleeps = Sleeps()
    with pytest.raises(JudgeError, match=r"only 3 s of rate_limit_wait_s \(10 s\) is left"):
        judge(client, sleeps, budget=10).grade(ANSWER, CASE)
    assert sleeps == [7.0]


def test_a_bare_429_is_not_guessed_at(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    api.script(limited(None))
    sleeps = Sleeps()
    with pytest.raises(JudgeError, match="gave no Retry-After"):
        judge(client, sleeps, budget=60).grade(ANSWER, CASE)
    assert sleeps == []


def test_other_errors_are_never_waited_out(api: FakeAnthropic, client: anthropic.Anthropic) -> None:
    api.script(error(400, "invalid_request_error", "bad", {"retry-after": "1"}))
    sleeps = Sleeps()
    with pytest.raises(JudgeError, match="HTTP 400"):
        judge(client, sleeps, budget=60).grade(ANSWER, CASE)
    assert sleeps == []


CONFIG = """\
goldens: goldens.jsonl
checks: checks.yaml
metrics: [helpfulness]
target: {{python: "qa:make_target"}}
judge:
  metric: helpfulness
  model: claude-test
  rubric: "5 if right"
{extra}"""


def test_the_config_opts_in_on_the_anthropic_provider(tmp_path: Path) -> None:
    (tmp_path / "goldens.jsonl").write_text('{"id": "a", "query": "q", "expected": "x"}\n')
    (tmp_path / "checks.yaml").write_text(
        "checks:\n  - {id: h, metric: helpfulness, op: '>=', threshold: 1}\n"
    )
    config = tmp_path / "evalkit.yaml"
    config.write_text(CONFIG.format(extra="  rate_limit_wait_s: 30\n"))
    prepare(load_config(config))
    fn = get_metric("helpfulness").fn
    assert isinstance(fn, LLMJudge)
    assert fn.rate_limit_budget.total_s == 30.0
    config.write_text(CONFIG.format(extra="  base_url: http://127.0.0.1:9\n"))
    with pytest.raises(ConfigError, match="base_url applies to provider 'openai' only"):
        load_config(config)
    with pytest.raises(ConfigError, match="LLMJudge: rate_limit_wait_s"):
        LLMJudge("r", "m", rate_limit_wait_s=-1)
