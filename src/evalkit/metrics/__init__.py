"""Metrics: the retrieval formulas, the built-ins, and the LLM judge."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from evalkit.errors import JudgeError

if TYPE_CHECKING:
    from evalkit.metrics import diversity, latency, retrieval
    from evalkit.metrics.core import ndcg_at_k, recall_at_k
    from evalkit.metrics.diversity import entropy, max_item_share
    from evalkit.metrics.judge import LLMJudge
    from evalkit.metrics.judge_base import Grade, TokenUsage
    from evalkit.metrics.latency import percentile

# name -> the module that owns it ("" after the dot: the name is that submodule).  The
# judge (its cache, its HTTP retry rules, sockets) is among them: most programs never grade.
_LAZY = {
    "Grade": "evalkit.metrics.judge_base",
    "LLMJudge": "evalkit.metrics.judge",
    "TokenUsage": "evalkit.metrics.judge_base",
    "diversity": "evalkit.metrics.",
    "entropy": "evalkit.metrics.diversity",
    "latency": "evalkit.metrics.",
    "max_item_share": "evalkit.metrics.diversity",
    "ndcg_at_k": "evalkit.metrics.core",
    "percentile": "evalkit.metrics.latency",
    "recall_at_k": "evalkit.metrics.core",
    "retrieval": "evalkit.metrics.",
}


def __getattr__(name: str) -> Any:
    owner = _LAZY.get(name)
    if owner is None:
        raise AttributeError(f"module 'evalkit.metrics' has no attribute {name!r}")
    if owner.endswith("."):
        value: Any = importlib.import_module(owner + name)
    else:
        value = getattr(importlib.import_module(owner), name)
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
