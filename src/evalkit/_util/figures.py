"""How a metric's value, change or bound is printed, everywhere: one owner for its digits."""

from __future__ import annotations

import math
from typing import Final

NA: Final = "n/a"


def json_float(x: float | None) -> float | None:
    """A statistic as JSON holds it: a finite float, else null."""
    return float(x) if x is not None and math.isfinite(x) else None


def num(x: float | None, unit: str = "") -> str:
    """Four decimals, one from 100 up; ``n/a`` for missing or non-finite.

    ``unit`` (:func:`evalkit._util.units.unit_of`, e.g. ``"ms"``) follows a finite value.
    """
    if x is None or not math.isfinite(x):
        return NA
    after = f" {unit}" if unit else ""
    if x == 0:
        return "0.0000" + after
    if abs(x) >= 1e6 or abs(x) < 1e-4:
        return f"{x:.3e}{after}"
    if abs(x) >= 100:
        return f"{x:.1f}{after}"
    return f"{x:.4f}{after}"


def signed(x: float | None, unit: str = "") -> str:
    """:func:`num` with its sign always shown (a change, a bound)."""
    shown = num(x, unit)
    return "+" + shown if x is not None and x >= 0 and shown != NA else shown
