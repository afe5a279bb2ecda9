"""Judge calls obey the run's ``rate_limit``, like target calls."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from evalkit._util.ratelimit import RateLimiter

if TYPE_CHECKING:
    from evalkit._model.registry import MetricDef

__all__ = ["paced_judges"]


@contextmanager
def paced_judges(metrics: Sequence[MetricDef], rate_limit: float | None) -> Iterator[None]:
    """Within the block, every LLM judge among ``metrics`` paces its API calls."""
    from evalkit.metrics.judge_base import JudgeBase

    judges = [d.fn for d in metrics if isinstance(d.fn, JudgeBase)]
    if rate_limit is None or not judges:
        yield
        return
    before = [judge.pacer for judge in judges]
    for judge in judges:
        judge.pacer = RateLimiter(rate_limit).acquire
    try:
        yield
    finally:
        for judge, pacer in zip(judges, before, strict=True):
            judge.pacer = pacer
