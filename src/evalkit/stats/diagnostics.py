"""Honesty about when a result is shaky: small samples and skewed differences.

The figures quoted in the warnings come from ``tests/statistics`` (the
calibration suite; the full table is in ``docs/calibration.md``).
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
from numpy.typing import NDArray

from evalkit.stats.outcome import StatWarning

#: Below this many cases the percentile bootstrap rejects a true null too often.
SMALL_N: Final = 80
#: From this many cases on, ``auto`` holds 2.5% ± 1 point one-sided on every measured shape.
CALIBRATED_N: Final = 30
#: Measured by ``uv run python -m evalkit.stats.calibrate`` (docs/calibration.md).
SMALL_N_FIGURES: Final = (
    "measured at n = 20 for the default 'auto': 1.4-3.1% one-sided against 2.5% on the "
    "calibration shapes, but up to 9% on a skewed metric with many ties"
)
BOOTSTRAP_SMALL_N_FIGURES: Final = "measured one-sided up to 8.2% against 2.5% at n = 20-50"
#: |sample skewness| of the per-case differences above which a warning names the skew.
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
    *, n: int, method: str, kind: str, diffs: NDArray[np.float64] | None
) -> tuple[StatWarning, ...]:
    """Warnings for a result decided by ``method`` (an engine method or a gate procedure)."""
    out: list[StatWarning] = []
    if kind == "aggregate" and diffs is None and n < SMALL_N:
        out.append(
            StatWarning(
                "aggregate_small_n",
                f"only {n} cases: a bootstrap of a whole-run aggregate is rough below "
                f"{SMALL_N} cases and tends to reject a true null too often; treat a "
                "borderline result as undecided",
            )
        )
    elif method == "bootstrap" and n < SMALL_N:
        out.append(
            StatWarning(
                "small_n",
                f"only {n} cases: the percentile bootstrap rejects a true null too often "
                f"below {SMALL_N} cases ({BOOTSTRAP_SMALL_N_FIGURES}); method='t' or the "
                "gate's default 'auto' hold their level better here (docs/calibration.md)",
            )
        )
    elif diffs is not None and n < CALIBRATED_N:
        out.append(
            StatWarning(
                "small_n",
                f"only {n} cases: below {CALIBRATED_N} cases the false-fail rate is not "
                f"guaranteed within a point of nominal ({SMALL_N_FIGURES}); treat a "
                "borderline result as undecided",
            )
        )
    if diffs is not None:
        g1 = skewness(diffs)
        if math.isfinite(g1) and abs(g1) > SKEW_LIMIT:
            out.append(
                StatWarning(
                    "skewed",
                    f"the per-case differences are heavily skewed (skewness {g1:+.2f}, "
                    f"n = {n}): a few extreme cases drive the result, so inspect them"
                    + (
                        ""
                        if method in ("skew-t", "auto")
                        else "; the default method 'auto' corrects for skewness"
                    ),
                )
            )
    return tuple(out)
