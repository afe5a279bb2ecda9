"""How a p-value is printed, everywhere: one owner for its digits and its label.

Four decimals, as the spec prints them; below what four decimals can show, ``<0.0001``
(a p is never exactly 0).  With a label the relation is part of the text:
``p=0.0435``, ``p<0.0001`` -- never ``p=<0.0001``.  A label says what the p tests
when that is not "no difference": ``Holm-adjusted p`` under a correction,
``p vs margin`` for a non-inferiority check, ``p vs min_effect`` for a regression check
that tolerates a small loss.
"""

from __future__ import annotations

import math
from typing import Final

#: Smallest p printed as a number; anything that would round below it is ``<0.0001``.
P_SHOWN: Final = 0.0001
NA: Final = "n/a"

#: How a correction is named in front of the p it adjusted.
CORRECTION_NAMES: Final[dict[str, str]] = {"holm": "Holm", "maxt": "max-T"}


def pvalue(p: float | None) -> str:
    """The number alone (a table cell headed ``p``): ``0.0435``, ``<0.0001`` or ``n/a``."""
    if p is None or not math.isfinite(p):
        return NA
    return f"<{P_SHOWN:.4f}" if p < P_SHOWN / 2 else f"{p:.4f}"


def p_text(p: float | None, label: str = "p") -> str:
    """``label`` and the p: ``p=0.0435``, ``p<0.0001``, ``p vs margin=0.0012``."""
    shown = pvalue(p)
    return f"{label}{shown}" if shown.startswith("<") else f"{label}={shown}"


def p_label(correction: str, non_inferiority: bool, min_effect: bool = False) -> str:
    """What a verdict's deciding p tests, as its label reads."""
    if non_inferiority:
        return "p vs margin"
    name = CORRECTION_NAMES.get(correction)
    label = "p" if name is None else f"{name}-adjusted p"
    return f"{label} vs min_effect" if min_effect else label
