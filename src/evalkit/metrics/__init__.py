"""Metrics: the retrieval formulas, the built-ins, and the LLM judge.

Importing this package registers the built-ins.  ``latency``, ``diversity``
and ``retrieval`` are paired-evalkit 0.2.0's module paths for them.
"""

from __future__ import annotations

from evalkit.errors import JudgeError
from evalkit.metrics import diversity, latency, retrieval
from evalkit.metrics.builtin import register_builtins
from evalkit.metrics.core import ndcg_at_k, recall_at_k
from evalkit.metrics.diversity import entropy, max_item_share
from evalkit.metrics.judge import Grade, LLMJudge, TokenUsage
from evalkit.metrics.latency import percentile

register_builtins()

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
