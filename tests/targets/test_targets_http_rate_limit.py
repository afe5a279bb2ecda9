"""HttpTarget and 429: never retried by default; waited out within a budget when opted in."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from evalkit.errors import InputError, TargetError
from evalkit.goldens import GoldenCase
from evalkit.targets import HttpTarget
from servers.search import Reply, SearchServer

CASE = GoldenCase(id="q1", query="q")
OK = Reply(json={"answer": "fine"})


def limited(retry_after: str | None) -> Reply:
    headers = {} if retry_after is None else {"retry-after": retry_after}
    return Reply(status=429, json={"error": "slow down"}, headers=headers)


@pytest.fixture
def server() -> Iterator[SearchServer]:
    with SearchServer() as running:
        yield running


def target(url: str, slept: list[float], **kwargs: Any) -> HttpTarget:
    return HttpTarget(
        url=url,
        name="llm",
        build_payload=lambda case: {"q": case.query},
        extract=lambda body: str(body["answer"]),
        timeout_s=2.0,
        sleep=slept.append,
        **kwargs,
    )


def test_a_429_is_not_retried_by_default(server: SearchServer) -> None:
    url = server.route("/llm", limited("1"), OK)
    slept: list[float] = []
    with target(url, slept) as t, pytest.raises(TargetError) as info:
        t.invoke(CASE)
    assert "HTTP 429" in str(info.value)
    assert "not retried: set rate_limit_wait_s to wait it out" in str(info.value)
    assert server.count("/llm") == 1
    assert slept == []


def test_retry_after_is_waited_out_when_opted_in(server: SearchServer) -> None:
    url = server.route("/llm", limited("2"), limited("0.5"), OK)
    slept: list[float] = []
    with target(url, slept, rate_limit_wait_s=10) as t:
        response = t.invoke(CASE)
    assert response.text == "fine"
    assert response.meta["rate_limit_wait_s"] == 2.5
    assert slept == [2.0, 0.5]
    assert server.count("/llm") == 3


def test_the_budget_is_a_total_for_the_target(server: SearchServer) -> None:
    url = server.route("/llm", limited("3"), OK, limited("3"))
    slept: list[float] = []
    with target(url, slept, rate_limit_wait_s=5) as t:
        assert t.invoke(CASE).text == "fine"
        with pytest.raises(TargetError, match=r"rate limited for 3 s, more than the 2 s left"):
            t.invoke(CASE)
    assert slept == [3.0]


def test_a_bare_429_is_not_guessed_at(server: SearchServer) -> None:
    url = server.route("/llm", limited(None), OK)
    slept: list[float] = []
    with (
        target(url, slept, rate_limit_wait_s=60) as t,
        pytest.raises(TargetError, match="no Retry-After"),
    ):
        t.invoke(CASE)
    assert slept == []


def test_other_4xx_still_fail_at_once_with_a_budget(server: SearchServer) -> None:
    url = server.route(
        "/llm", Reply(status=400, json={"error": "bad"}, headers={"retry-after": "1"})
    )
    slept: list[float] = []
    with target(url, slept, rate_limit_wait_s=60) as t, pytest.raises(TargetError, match="400"):
        t.invoke(CASE)
    assert slept == []
    assert server.count("/llm") == 1


def test_a_bad_budget_is_refused() -> None:
    with pytest.raises(InputError, match="rate_limit_wait_s"):
        target("http://127.0.0.1:9/x", [], rate_limit_wait_s=-1)
