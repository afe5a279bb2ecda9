"""OpenAIJudge against a real loopback Chat Completions server, through httpx."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from evalkit import GoldenCase, TargetResponse, register_metric
from evalkit._engine.execute import score_case
from evalkit._model.registry import get_metric
from evalkit.errors import ConfigError, EvalkitWarning, JudgeError
from evalkit.metrics import LLMJudge
from evalkit.metrics.openai_judge import OpenAIJudge
from fakes import unused_port
from fakes.anthropic_server import malformed
from fakes.openai_server import (
    FakeOpenAI,
    completion,
    grade,
    rate_limited,
    server_error,
    text_only,
    tool_call,
)

MODEL = "gpt-4o-mini"
RUBRIC = "Score 5 if the answer is correct and complete, 1 if it is wrong."
CASE = GoldenCase(id="q-capital", query="Capital of Australia?", expected="Canberra")
ANSWER = TargetResponse(text="Canberra.", latency_ms=80.0)


class Sleeps:
    """Records the waits instead of sleeping (no test depends on timing)."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture
def api() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


def make_judge(api: FakeOpenAI, sleeps: Sleeps | None = None, **kwargs: Any) -> OpenAIJudge:
    options: dict[str, Any] = {
        "rubric": RUBRIC,
        "model": MODEL,
        "base_url": api.openai_base_url,
        "api_key": "test",
        "sleep": sleeps if sleeps is not None else Sleeps(),
        "timeout_s": 10.0,
    }
    options.update(kwargs)
    return OpenAIJudge(**options)


# --- the happy path and the request on the wire --------------------------------------------


def test_grade_score_reason_usage_and_cost(api: FakeOpenAI) -> None:
    api.script(grade(4, "Correct.", prompt_tokens=1000, completion_tokens=100))
    judge = make_judge(api, prices={"input": 0.15, "output": 0.60})
    result = judge.grade(ANSWER, CASE)
    assert (result.score, result.reason, result.cached) == (4, "Correct.", False)
    assert result.usage is not None
    assert (result.usage.input_tokens, result.usage.output_tokens) == (1000, 100)
    assert result.usage.cost_usd == pytest.approx((1000 * 0.15 + 100 * 0.60) / 1e6)
    assert judge.total_usage().input_tokens == 1000
    assert judge.api_calls == 1


def test_the_request_forces_one_strict_function_call(api: FakeOpenAI) -> None:
    make_judge(api, temperature=0.0).grade(ANSWER, CASE)
    (request,) = api.completion_requests
    body = request.body
    assert body is not None
    assert request.headers["authorization"] == "Bearer test"
    assert body["model"] == MODEL
    assert body["tool_choice"] == {"type": "function", "function": {"name": "record_grade"}}
    assert body["parallel_tool_calls"] is False
    assert body["temperature"] == 0.0
    assert body["max_tokens"] == 512
    (tool,) = body["tools"]
    assert tool["function"]["strict"] is True
    score = tool["function"]["parameters"]["properties"]["score"]
    assert score == {**score, "type": "integer", "enum": [1, 2, 3, 4, 5]}
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "<expected_answer>\nCanberra\n</expected_answer>" in body["messages"][1]["content"]
    assert "<response>\nCanberra.\n</response>" in body["messages"][1]["content"]


def test_temperature_is_left_out_unless_set(api: FakeOpenAI) -> None:
    make_judge(api, token_limit_key="max_completion_tokens").grade(ANSWER, CASE)
    body = api.completion_requests[0].body or {}
    assert "temperature" not in body
    assert body["max_completion_tokens"] == 512
    assert "max_tokens" not in body


def test_azure_deployment_with_api_version_and_api_key_header(api: FakeOpenAI) -> None:
    judge = make_judge(api, base_url=api.azure_base_url("grader"), api_version="2024-10-21")
    assert judge.grade(ANSWER, CASE).score == 4
    (request,) = api.completion_requests
    assert request.path == "/openai/deployments/grader/chat/completions"
    assert request.query == "api-version=2024-10-21"
    assert request.headers["api-key"] == "test"
    assert "authorization" not in request.headers


def test_a_keyless_local_server_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAI(api_key=None) as local:
        judge = make_judge(local, api_key=None)
        assert judge.grade(ANSWER, CASE).score == 4
        assert "authorization" not in local.completion_requests[0].headers


def test_the_key_is_read_from_the_environment(
    api: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_KEY", "test")
    assert make_judge(api, api_key=None, api_key_env="MY_KEY").grade(ANSWER, CASE).score == 4


def test_a_wrong_key_names_the_variable(api: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "wrong")
    with pytest.raises(JudgeError) as info:
        make_judge(api, api_key=None).grade(ANSWER, CASE)
    message = str(info.value)
    assert "HTTP 401 invalid_api_key" in message
    assert "check the key (OPENAI_API_KEY)" in message
    assert "\n" not in message


def test_registered_as_a_metric_it_fills_row_meta(api: FakeOpenAI) -> None:
    register_metric("helpfulness", higher_is_better=True)(make_judge(api))
    row = score_case(CASE, TargetResponse(text="Canberra."), [get_metric("helpfulness")])
    assert row.metrics == {"helpfulness": 4.0}
    assert row.response is not None
    assert row.response.meta["helpfulness_input_tokens"] == 150


# --- cache, identity, cache-only -----------------------------------------------------------


def test_second_grade_is_a_cache_hit(api: FakeOpenAI, tmp_path: Path) -> None:
    cache = tmp_path / "cache.json"
    make_judge(api, cache_path=cache).grade(ANSWER, CASE)
    again = make_judge(api, cache_path=cache).grade(ANSWER, CASE)
    assert again.cached
    assert again.score == 4
    assert len(api.completion_requests) == 1


def test_cache_key_holds_provider_base_url_and_model(api: FakeOpenAI) -> None:
    base = make_judge(api)
    other_url = make_judge(api, base_url="http://127.0.0.1:9/v1")
    other_model = make_judge(api, model="gpt-4.1")
    azure = make_judge(api, api_version="2024-10-21")
    anthropic_judge = LLMJudge(RUBRIC, MODEL)
    keys = {
        j.cache_key(ANSWER, CASE) for j in (base, other_url, other_model, azure, anthropic_judge)
    }
    assert len(keys) == 5
    prints = {j.fingerprint for j in (base, other_url, other_model, azure, anthropic_judge)}
    assert len(prints) == 5
    assert make_judge(api).fingerprint == base.fingerprint


def test_cache_only_miss_raises_without_a_request(api: FakeOpenAI, tmp_path: Path) -> None:
    judge = make_judge(api, cache_path=tmp_path / "c.json", cache_only=True)
    with pytest.raises(JudgeError, match="not in the judge cache"):
        judge.grade(ANSWER, CASE)
    assert api.completion_requests == []


def test_cache_only_replays_a_grade_paid_for_earlier(api: FakeOpenAI, tmp_path: Path) -> None:
    cache = tmp_path / "c.json"
    make_judge(api, cache_path=cache).grade(ANSWER, CASE)
    replay = make_judge(api, cache_path=cache, cache_only=True).grade(ANSWER, CASE)
    assert replay.cached
    assert len(api.completion_requests) == 1


# --- replies that are not a grade ------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (text_only("It deserves a 4."), r"no record_grade tool call .*It deserves a 4"),
        (grade(9), r"score 9 is outside 1\.\.5"),
        (grade(0), r"score 0 is outside 1\.\.5"),
        (tool_call({"score": "4", "reason": "x"}), r"score must be an integer"),
        (tool_call({"score": 4}), r"lacks reason"),
        (tool_call({"score": 4, "reason": "x", "extra": 1}), r"unexpected fields \['extra'\]"),
        (tool_call('{"score": 4, "reason": '), r"arguments are not valid JSON"),
        (tool_call({"score": 4, "reason": "x"}, name="other"), r"called tool 'other'"),
        (completion({"content": None, "tool_calls": "x"}), r"tool_calls is not a list"),
        (malformed(), r"malformed API response body: not valid JSON"),
        (malformed(b'{"id": "x"}'), r"malformed API response: no choices"),
    ],
)
def test_a_reply_that_is_not_a_valid_grade_is_a_one_line_error(
    api: FakeOpenAI, reply: Any, expected: str
) -> None:
    api.script(reply)
    with pytest.raises(JudgeError, match=expected) as info:
        make_judge(api).grade(ANSWER, CASE)
    assert str(info.value).startswith(f"LLM judge {MODEL!r} on case 'q-capital': ")
    assert "\n" not in str(info.value)


def test_two_tool_calls_are_refused(api: FakeOpenAI) -> None:
    call = {"type": "function", "function": {"name": "record_grade", "arguments": "{}"}}
    api.script(completion({"content": None, "tool_calls": [call, call]}))
    with pytest.raises(JudgeError, match="lacks score, reason|2 times"):
        make_judge(api).grade(ANSWER, CASE)


# --- 5xx, transport, 429 ---------------------------------------------------------------------


def test_5xx_is_retried_with_backoff_then_succeeds(api: FakeOpenAI, sleeps: Sleeps) -> None:
    api.script(server_error(503), server_error(500), grade(3))
    assert make_judge(api, sleeps).grade(ANSWER, CASE).score == 3
    assert sleeps.calls == [0.5, 1.0]
    assert len(api.completion_requests) == 3


def test_5xx_past_the_retries_names_status_and_attempts(api: FakeOpenAI, sleeps: Sleeps) -> None:
    api.script(server_error(), server_error(), server_error())
    with pytest.raises(JudgeError, match=r"HTTP 500 server_error: .* after 3 attempt\(s\)"):
        make_judge(api, sleeps, max_retries=2).grade(ANSWER, CASE)
    assert len(api.completion_requests) == 3


def test_no_retries_when_asked(api: FakeOpenAI, sleeps: Sleeps) -> None:
    api.script(server_error(502))
    with pytest.raises(JudgeError, match=r"HTTP 502 .* after 1 attempt\(s\)"):
        make_judge(api, sleeps, max_retries=0).grade(ANSWER, CASE)
    assert sleeps.calls == []


def test_an_unreachable_server_is_one_line(sleeps: Sleeps) -> None:
    url = f"http://127.0.0.1:{unused_port()}/v1"
    judge = OpenAIJudge(RUBRIC, MODEL, base_url=url, api_key="k", sleep=sleeps, max_retries=1)
    with pytest.raises(JudgeError, match=r"could not reach .*after 2 attempt\(s\)"):
        judge.grade(ANSWER, CASE)
    assert sleeps.calls == [0.5]


def test_429_fails_at_once_by_default(api: FakeOpenAI, sleeps: Sleeps) -> None:
    api.script(rate_limited("2"))
    with pytest.raises(JudgeError) as info:
        make_judge(api, sleeps).grade(ANSWER, CASE)
    assert "HTTP 429 rate_limit_exceeded" in str(info.value)
    assert "asked to wait 2 s: set rate_limit_wait_s" in str(info.value)
    assert sleeps.calls == []
    assert len(api.completion_requests) == 1


def test_429_retry_after_is_waited_out_within_the_budget(api: FakeOpenAI, sleeps: Sleeps) -> None:
    api.script(rate_limited("2"), rate_limited("1500", header="retry-after-ms"), grade(5))
    judge = make_judge(api, sleeps, rate_limit_wait_s=10)
    assert judge.grade(ANSWER, CASE).score == 5
    assert sleeps.calls == [2.0, 1.5]
    assert judge.rate_limit_budget.spent_s == 3.5


def test_429_that_does_not_fit_the_budget_fails_without_waiting(
    api: FakeOpenAI, sleeps: Sleeps
) -> None:
    api.script(rate_limited("4"), rate_limited("4"))
    judge = make_judge(api, sleeps, rate_limit_wait_s=5)
    with pytest.raises(JudgeError, match=r"asked to wait 4 s but only 1 s of rate_limit_wait_s"):
        judge.grade(ANSWER, CASE)
    assert sleeps.calls == [4.0]


def test_429_without_retry_after_is_not_guessed_at(api: FakeOpenAI, sleeps: Sleeps) -> None:
    api.script(rate_limited(None))
    with pytest.raises(JudgeError, match="gave no Retry-After"):
        make_judge(api, sleeps, rate_limit_wait_s=60).grade(ANSWER, CASE)
    assert sleeps.calls == []


def test_other_4xx_is_never_retried(api: FakeOpenAI, sleeps: Sleeps) -> None:
    with pytest.raises(JudgeError, match=r"HTTP 404 not_found.*check the model name and base_url"):
        make_judge(api, sleeps, base_url=f"{api.base_url}/v2").grade(ANSWER, CASE)
    assert sleeps.calls == []
    assert len(api.requests) == 1


def test_a_temperature_a_reasoning_model_refuses_is_named_not_dropped(sleeps: Sleeps) -> None:
    # The temperature is part of what the judge is: never changed behind the user's back.
    with FakeOpenAI(reasoning_model=True) as server:
        judge = make_judge(server, sleeps, temperature=0.2, token_limit_key="max_completion_tokens")
        with pytest.raises(
            JudgeError, match=r"HTTP 400 unsupported_value.*leave temperature unset"
        ):
            judge.grade(ANSWER, CASE)
        assert len(server.completion_requests) == 1


def test_auto_resends_a_refused_max_tokens_at_most_once_per_request(sleeps: Sleeps) -> None:
    # A server that refuses both keys costs one free 400 more, never a loop.
    with FakeOpenAI(reasoning_model=True) as server:
        judge = make_judge(server, sleeps, temperature=0.2)
        with (
            pytest.warns(EvalkitWarning, match="sending 'max_completion_tokens'"),
            pytest.raises(JudgeError, match="leave temperature unset"),
        ):
            judge.grade(ANSWER, CASE)
        keys = [sorted(r.body or {}) for r in server.completion_requests]
        assert ["max_tokens" in k for k in keys] == [True, False]
        assert judge.request_body(ANSWER, CASE)["max_completion_tokens"] == 512


# --- configuration and the fake itself -------------------------------------------------------


def test_bad_configuration_is_refused() -> None:
    with pytest.raises(ConfigError, match="base_url must be an http"):
        OpenAIJudge(RUBRIC, MODEL, base_url="api.openai.com")
    with pytest.raises(ConfigError, match="rate_limit_wait_s"):
        OpenAIJudge(RUBRIC, MODEL, rate_limit_wait_s=-1)
    with pytest.raises(ConfigError, match="token_limit_key"):
        OpenAIJudge(RUBRIC, MODEL, token_limit_key="tokens")


def test_the_fake_refuses_what_the_real_service_refuses(api: FakeOpenAI) -> None:
    judge = make_judge(api)
    good = judge.request_body(ANSWER, CASE)
    loose = json.loads(json.dumps(good))
    del loose["tools"][0]["function"]["parameters"]["additionalProperties"]
    unknown = {**good, "tool_choice": {"type": "function", "function": {"name": "nope"}}}
    url = f"{api.openai_base_url}/chat/completions"
    with httpx.Client() as http:
        auth = {"authorization": "Bearer test"}
        assert http.post(url, json=good, headers=auth).status_code == 200
        assert http.post(url, json=loose, headers=auth).status_code == 400
        assert http.post(url, json=unknown, headers=auth).status_code == 400
        assert http.post(url, json=good).status_code == 401


# --- pre-flight (before any case runs) -------------------------------------------------------


def test_preflight_reads_the_model_list_once(api: FakeOpenAI) -> None:
    api.models = ("gpt-4.1", MODEL)
    make_judge(api).preflight()
    assert [(r.method, r.path) for r in api.requests] == [("GET", "/v1/models")]
    assert api.requests[0].headers["authorization"] == "Bearer test"


def test_preflight_refuses_a_model_the_server_does_not_serve(api: FakeOpenAI) -> None:
    api.models = ("llama3.1:8b", "qwen2.5:7b")
    with pytest.raises(ConfigError, match=r"does not serve this model \(it lists: llama3\.1:8b"):
        make_judge(api).preflight()
    assert api.completion_requests == []


def test_preflight_refuses_a_wrong_key(api: FakeOpenAI) -> None:
    with pytest.raises(ConfigError, match=r"refused the key \(HTTP 401\); check api_key"):
        make_judge(api, api_key="wrong").preflight()


def test_preflight_needs_a_key_for_openai_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    judge = OpenAIJudge(RUBRIC, MODEL)  # https://api.openai.com/v1: never contacted here
    with pytest.raises(
        ConfigError, match=r"no API key for https://api\.openai\.com/v1; set OPENAI"
    ):
        judge.preflight()


def test_preflight_on_a_keyless_local_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAI(api_key=None, models=(MODEL,)) as local:
        make_judge(local, api_key=None).preflight()


def test_preflight_names_an_unreachable_server() -> None:
    url = f"http://127.0.0.1:{unused_port()}/v1"
    with pytest.raises(JudgeError, match=r"cannot reach http://127\.0\.0\.1:\d+/v1/models"):
        OpenAIJudge(RUBRIC, MODEL, base_url=url, api_key="k").preflight()


def test_preflight_on_azure_checks_the_key_only(api: FakeOpenAI) -> None:
    make_judge(api, base_url=api.azure_base_url(), api_version="2024-10-21").preflight()
    assert api.requests == []


def test_preflight_when_replaying_does_not_touch_the_server(
    api: FakeOpenAI, tmp_path: Path
) -> None:
    make_judge(api, cache_path=tmp_path / "c.json", cache_only=True).preflight()
    assert api.requests == []
