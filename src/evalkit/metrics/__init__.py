"""Metrics: the retrieval formulas, the built-ins, and the LLM judge."""

from __future__ import annotations

from evalkit.metrics.builtin import register_builtins


register_builtins()

__all__: list[str] = []
