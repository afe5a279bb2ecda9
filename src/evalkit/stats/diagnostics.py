"""Honesty about when a result is shaky: small samples and skewed differences.

The figures quoted in the warnings come from ``tests/statistics`` (the
calibration suite; the full table is in ``docs/calibration.md``).
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
from numpy.typing import NDArray

from evalkit.stats.names import Method
from evalkit.stats.outcome import StatWarning

#: Below this many cases the percentile bootstrap rejects a true null too often.
SMALL_N: Final = 80
#: |sample skewness| of the per-case differences above which no test is calibrated at small n.
SKEW_LIMIT: Final = 1.0


def skewness(values: NDArray[np.float64]) -> float:
    """Sample skewness g1 = m3 / m2**1.5 (0 when the values do not vary)."""
    centred = values - float(np.mean(values))
    m2 = float(np.mean(centred**2))
    if m2 == 0.0:
        return 0.0
    m3 = float(np.mean(centred * centred * centred))  # ** 3 takes numpy's slow pow()
    return m3 / math.pow(m2, 1.5)


def warnings_for(
    *, n: int, method: Method, kind: str, diffs: NDArray[np.float64] | None
) -> tuple[StatWarning, ...]:
    out: list[StatWarning] = []
    if method == "bootstrap" and n < SMALL_N:
        if kind == "aggregate" and diffs is None:
            out.append(
                StatWarning(
                    "aggregate_small_n",
                    f"only {n} cases: a bootstrap of a whole-run aggregate is rough below "
                    f"{SMALL_N} cases and tends to reject a true null too often; treat a "
                    "borderline result as undecided",
                )
            )
        else:
            out.append(
                StatWarning(
                    "small_n",
                    f"only {n} cases: the percentile bootstrap rejects a true null too often "
                    f"below {SMALL_N} cases (measured 6.7-6.9% false positives at n = 20-50 "
                    "against a nominal 5%); method='t' (or 'permutation') holds its level "
                    "better here (4.2-5.9%, docs/calibration.md)",
                )
            )
    if diffs is not None:
        g1 = skewness(diffs)
        if math.isfinite(g1) and abs(g1) > SKEW_LIMIT:
            out.append(
                StatWarning(
                    "skewed",
                    f"the per-case differences are heavily skewed (skewness {g1:+.2f}, "
                    f"n = {n}): no test is well calibrated on such data at small n; a few "
                    "extreme cases drive the result, so inspect them",
                )
            )
    return tuple(out)
