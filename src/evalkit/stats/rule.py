"""When a comparison check fails: the gate's one rule, read from the interval (DESIGN §5).

Both the gate's verdicts and the family-wise estimate that the report prints beside
them call :func:`fails`, so the figure in the header simulates exactly the decision
the table shows: one place to get the sign of a margin wrong, and one test for it.
It works on a single interval (a verdict) or on arrays of them (simulated gates).
"""

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
    """Whether the interval ``[low, high]`` fails a check of ``mode`` that tests ``tested``.

    ``no_significant_regression`` (``tested`` 0) fails only when the whole interval lies
    on the bad side.  ``non_inferiority`` (``tested`` the margin on the bad side, −m or
    +m) passes only when the interval's bad end is beyond it on the good side, so it
    fails whenever the interval reaches the margin.
    """
    if mode == "non_inferiority":
        return low <= tested if higher_is_better else high >= tested
    return high < tested if higher_is_better else low > tested
