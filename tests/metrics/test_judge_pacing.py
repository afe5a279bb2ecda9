"""A run's rate_limit paces the judge's API calls (not its cache hits), and only during the run."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest

from evalkit import CallableTarget, GoldenCase, GoldenSet, register_metric
from evalkit._engine import execute
from evalkit._util.ratelimit import RateLimiter
from evalkit.metrics import judge_base
from evalkit.metrics.openai_judge import OpenAIJudge
from fakes.openai_server import FakeOpenAI


class Counting(RateLimiter):
    made: ClassVar[list[Counting]] = []

    def __init__(self, per_second: float) -> None:
        super().__init__(per_second)
        self.rate = per_second
        self.acquired = 0
        Counting.made.append(self)

    def acquire(self) -> None:
        self.acquired += 1  # no sleeping: the count is what is checked


def count_limiters(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both users of the limiter (the target's pacing and the judges') make Counting ones."""
    monkeypatch.setattr(execute, "RateLimiter", Counting)
    monkeypatch.setattr(judge_base, "RateLimiter", Counting)


GOLDENS = GoldenSet(GoldenCase(id=f"c{i}", query=f"question {i}?") for i in range(3))


def test_judge_api_calls_are_paced_at_the_run_rate(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    count_limiters(monkeypatch)
    Counting.made = []
    with FakeOpenAI() as api:
        judge = OpenAIJudge(
            "rubric",
            "gpt-test",
            base_url=api.openai_base_url,
            api_key="test",
            cache_path=tmp_path / "cache.json",
        )
        register_metric("helpfulness", higher_is_better=True)(judge)
        target = CallableTarget(lambda case: "an answer", name="bot")
        execute.evaluate(target, GOLDENS, ["helpfulness"], rate_limit=5.0, concurrency=2)
        target_limiter, judge_limiter = Counting.made
        assert (target_limiter.rate, judge_limiter.rate) == (5.0, 5.0)
        assert target_limiter.acquired >= 3  # workers also pass it once before finding no case
        assert judge_limiter.acquired == 3 == len(api.completion_requests)
        assert judge.pacer is None  # restored after the run

        Counting.made = []
        execute.evaluate(target, GOLDENS, ["helpfulness"], rate_limit=5.0)
        _, again = Counting.made
        assert again.acquired == 0  # every grade was a cache hit
        assert len(api.completion_requests) == 3


def test_no_rate_limit_no_pacing(monkeypatch: pytest.MonkeyPatch) -> None:
    count_limiters(monkeypatch)
    Counting.made = []
    with FakeOpenAI() as api:
        judge = OpenAIJudge("rubric", "gpt-test", base_url=api.openai_base_url, api_key="test")
        register_metric("helpfulness", higher_is_better=True)(judge)
        execute.evaluate(CallableTarget(lambda case: "x", name="bot"), GOLDENS, ["helpfulness"])
    assert Counting.made == []
