"""Wins, losses and ties: the one polarity-aware definition every entry point uses."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalkit._util.arrays import FloatArray, IntArray
from evalkit.stats.fixedpoint import lattice_column


@dataclass(frozen=True)
class WinLossTie:
    wins: int
    losses: int
    ties: int


def case_signs(units: FloatArray, higher_is_better: bool | None) -> IntArray:
    """Per case: +1 a is better than b, -1 worse, 0 tied (``units`` on the lattice)."""
    signs: IntArray = np.sign(units).astype(np.int64)
    return signs if higher_is_better is not False else -signs


def count(signs: IntArray) -> WinLossTie:
    return WinLossTie(
        int(np.count_nonzero(signs > 0)),
        int(np.count_nonzero(signs < 0)),
        int(np.count_nonzero(signs == 0)),
    )


def case_outcomes(a: FloatArray, b: FloatArray, higher_is_better: bool | None) -> IntArray:
    """Per case +1 / -1 / 0 for a against b, from the values of both sides."""
    units, _, _ = lattice_column(a - b, (a, b))
    return case_signs(units, higher_is_better)
