"""Metrics: the retrieval formulas, the built-ins, and the LLM judge.

``latency``, ``diversity`` and ``retrieval`` are paired-evalkit 0.2.0's module paths
for them.  Importing this package loads none of its modules: each name below is
imported from its owner on first use, so a program that needs one formula module
(scoring a TREC run needs :mod:`evalkit.metrics.batch`) pays for that one.  The
built-ins are registered at the registry's first use (:mod:`evalkit._model.builtin_hook`),
whichever module a program starts from, as ``import evalkit`` promises.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from evalkit.errors import JudgeError

if TYPE_CHECKING:
    from evalkit.metrics import diversity, latency, retrieval
    from evalkit.metrics.core import ndcg_at_k, recall_at_k
    from evalkit.metrics.diversity import entropy, max_item_share
    from evalkit.metrics.judge import Grade, LLMJudge, TokenUsage
    from evalkit.metrics.latency import percentile

# name -> the module that owns it ("" after the dot: the name is that submodule).  The
# judge (its cache, its HTTP retry rules, sockets) is among them: most programs never grade.
_LAZY = {
    "Grade": "evalkit.metrics.judge",
    "LLMJudge": "evalkit.metrics.judge",
    "TokenUsage": "evalkit.metrics.judge",
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
