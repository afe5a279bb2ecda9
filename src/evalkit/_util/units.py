"""The unit a metric's values are in: every report prints a latency as ``120.0 ms``."""

from __future__ import annotations

import re

_LATENCY = re.compile(r"latency_(mean|p\d+)")


def unit_of(metric: str) -> str:
    """``"ms"`` for a latency metric, ``""`` for a unitless one."""
    return "ms" if _LATENCY.fullmatch(metric) else ""


def suffix(metric: str) -> str:
    """What follows a printed value of ``metric``: ``" ms"`` or nothing."""
    unit = unit_of(metric)
    return f" {unit}" if unit else ""


def reading(metric: str, direction: str) -> str:
    """How to read a plot or table of ``metric``: ``"lower is better; values in ms"``."""
    unit = unit_of(metric)
    return "; ".join(part for part in (direction, f"values in {unit}" if unit else "") if part)
