"""When a comparison check fails: the gate's one rule, read from the interval (DESIGN §5)."""

from __future__ import annotations

from typing import overload

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


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
