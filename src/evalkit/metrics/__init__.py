"""Metrics: the retrieval formulas, the built-ins, and the LLM judge."""

from __future__ import annotations

from evalkit.metrics.builtin import register_builtins
from evalkit.metrics.judge import Grade, LLMJudge, TokenUsage

register_builtins()

__all__ = ["Grade", "LLMJudge", "TokenUsage"]
