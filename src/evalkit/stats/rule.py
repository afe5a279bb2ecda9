"""When a comparison check fails: the gate's one rule, read from the interval (DESIGN §5)."""

from __future__ import annotations

from typing import overload

from evalkit._util.arrays import BoolArray, FloatArray


@overload
def fails(mode: str, low: float, high: float, tested: float, higher_is_better: bool) -> bool: ...


@overload
def fails(
    mode: str, low: FloatArray, high: FloatArray, tested: float, higher_is_better: bool
) -> BoolArray: ...


def fails(
    mode: str,
    low: float | FloatArray,
    high: float | FloatArray,
    tested: float,
    higher_is_better: bool,
) -> bool | BoolArray:
    """Whether the interval ``[low, high]`` fails a check of ``mode`` that tests ``tested``."""
    if mode == "non_inferiority":
        return low <= tested if higher_is_better else high >= tested
    return high < tested if higher_is_better else low > tested
