"""Judge calls obey the run's ``rate_limit``, like target calls.

A judge grades inside the case's slot, so ``concurrency`` already bounds it; a
``rate_limit`` (requests per second) must bound its API requests too, or a run
paced for a fragile target would still burst at the LLM API.  Each judge gets
its own limiter at the same rate (the judge's API is another endpoint than the
target's, so they do not share one budget), and only requests that reach the
API are paced: cache hits cost nothing and wait for nothing.
"""

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
