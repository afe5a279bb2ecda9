"""Honesty about when a result is shaky: small samples and skewed differences."""

from __future__ import annotations

import math
from typing import Final

import numpy as np
from numpy.typing import NDArray

from evalkit.stats.outcome import StatWarning

#: Below this many cases the percentile bootstrap rejects a true null too often.
SMALL_N: Final = 80
#: From this many cases on, paired t holds at most 2.6% one-sided on every claimed shape.
CALIBRATED_N: Final = 30
#: Measured by scripts/calibration/calibrate.py (docs/calibration.md; a test reads them off).
SMALL_N_FIGURES: Final = (
    "measured for the default (paired t) at n = 10-20: 0.4-2.9% one-sided against 2.5% on "
    "the claimed calibration shapes, and up to 9.0% on a skewed metric with many ties"
)
BOOTSTRAP_SMALL_N_FIGURES: Final = (
    "measured one-sided up to 5.7% against 2.5% at n = 15 and 5.5% at n = 30"
)
#: |sample skewness| of the per-case differences above which a warning names the skew.
SKEW_LIMIT: Final = 1.0
#: Below this many cases a verdict with no winning case says a rare large win may be missing.
NO_WIN_N: Final = 60
#: Measured on the shape ``rare-large-win`` (docs/calibration.md).
NO_WIN_FIGURES: Final = (
    "measured on a change that wins big on 1 case in 20 and loses a little on the rest: "
    "60% / 46% / 22% / 8% false fails at n = 10 / 15 / 30 / 50, every one of them on a "
    "sample with no win"
)


def skewness(values: NDArray[np.float64]) -> float:
    """Sample skewness g1 = m3 / m2**1.5 (0 when the values do not vary)."""
    centred = values - float(np.mean(values))
    m2 = float(np.mean(centred**2))
    if m2 == 0.0:
        return 0.0
    m3 = float(np.mean(centred * centred * centred))  # ** 3 takes numpy's slow pow()
    return m3 / math.pow(m2, 1.5)


#: What the skew warning adds: the default's measured limit there (docs/calibration.md).
SKEW_LIMIT_FIGURES: Final = (
    "paired t, the default, has no skewness correction: on strongly skewed differences "
    "(skewness 2) it fails falsely up to 6.5% one-sided from n = 30 against a nominal 2.5%, "
    'more on heavier tails (docs/calibration.md, "Strongly skewed differences")'
)


def warnings_for(
    *,
    n: int,
    method: str,
    kind: str,
    diffs: NDArray[np.float64] | None,
    higher_is_better: bool | None = None,
) -> tuple[StatWarning, ...]:
    """Warnings for a result decided by ``method`` (an engine method or a gate procedure).

    ``higher_is_better`` (known to the gate) enables the ``no_wins`` warning.
    """
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
                f"below {SMALL_N} cases ({BOOTSTRAP_SMALL_N_FIGURES}); the gate's default, "
                "paired t (method 'auto' or 't'), holds its level better here "
                "(docs/calibration.md)",
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
                    f"n = {n}): a few extreme cases drive the result, so inspect them; "
                    + SKEW_LIMIT_FIGURES,
                )
            )
    if diffs is not None and higher_is_better is not None and n < NO_WIN_N:
        # some case lost and none won: n may be too small to hold a rare win
        bad = diffs < 0 if higher_is_better else diffs > 0
        if not np.any(diffs > 0 if higher_is_better else diffs < 0) and bool(bad.any()):
            out.append(
                StatWarning(
                    "no_wins",
                    f"no case improved ({int(bad.sum())} of {n} worse, none better): if the "
                    f"change is meant to help a few cases, {n} cases may hold none of them (a "
                    f"win on 1 case in 20 is absent from {n} cases {0.95**n:.0%} of the "
                    "time), and then every procedure reports a regression that is not there "
                    f"({NO_WIN_FIGURES}); check that the cases cover what the change targets",
                )
            )
    return tuple(out)
