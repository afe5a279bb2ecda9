"""Metrics: the retrieval formulas, the built-ins, and the LLM judge.

Importing this package registers the built-ins.  ``latency``, ``diversity``
and ``retrieval`` are paired-evalkit 0.2.0's module paths for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalkit.errors import JudgeError
from evalkit.metrics import diversity, latency, retrieval
from evalkit.metrics.builtin import register_builtins
from evalkit.metrics.core import ndcg_at_k, recall_at_k
from evalkit.metrics.diversity import entropy, max_item_share
from evalkit.metrics.latency import percentile

if TYPE_CHECKING:
    from evalkit.metrics.judge import Grade, LLMJudge, TokenUsage

register_builtins()

# The judge (its cache, its HTTP retry rules, sockets) is loaded on first use: importing
# the package registers the built-ins for every evalkit import, and most never grade.
_JUDGE = ("Grade", "LLMJudge", "TokenUsage")


def __getattr__(name: str) -> Any:
    if name not in _JUDGE:
        raise AttributeError(f"module 'evalkit.metrics' has no attribute {name!r}")
    from evalkit.metrics import judge

    value = getattr(judge, name)
    globals()[name] = value
    return value


__all__ = [
    "Grade",
    "JudgeError",
    "LLMJudge",
    "TokenUsage",
    "diversity",
    "entropy",
    "latency",
    "max_item_share",
    "ndcg_at_k",
    "percentile",
    "recall_at_k",
    "retrieval",
]
