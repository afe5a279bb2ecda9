"""False-discovery-rate control across many one-sided tests: the per-slice verdicts (issue 28)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np

from evalkit._util.arrays import FloatArray

FdrMethod = Literal["bh", "by"]
FDR_NAMES: Final[dict[str, str]] = {"bh": "Benjamini-Hochberg", "by": "Benjamini-Yekutieli"}


def harmonic(m: int) -> float:
    """c(m) = 1 + 1/2 + ... + 1/m: Benjamini-Yekutieli's price for arbitrary dependence."""
    return math.fsum(1.0 / i for i in range(1, m + 1))


@dataclass(frozen=True)
class StepUp:
    """The outcome of one step-up procedure over m p-values."""

    rejected: tuple[bool, ...]
    adjusted: tuple[float, ...]  # the smallest q at which each test would be rejected
    level: float  # reject exactly when p ≤ level (q·R/m, BY: /c(m)); q/m(·/c(m)) when R = 0


def step_up(p_values: Sequence[float] | FloatArray, q: float, method: FdrMethod) -> StepUp:
    """Benjamini-Hochberg (``bh``) or Benjamini-Yekutieli (``by``) at rate ``q``."""
    if not 0.0 < q < 1.0:
        raise ValueError(f"the false discovery rate q must lie strictly between 0 and 1, got {q!r}")
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1 or np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError("p-values must be a flat sequence of numbers in [0, 1]")
    m = p.size
    if m == 0:
        return StepUp((), (), q)
    scale = harmonic(m) if method == "by" else 1.0
    order = np.argsort(p, kind="stable")
    ranks = np.arange(1, m + 1, dtype=np.float64)
    sorted_p = p[order]
    # reject the k smallest, k the largest rank with p₍ₖ₎ ≤ q·k/(m·c)
    below = sorted_p <= q * ranks / (m * scale)
    k = int(np.flatnonzero(below)[-1]) + 1 if np.any(below) else 0
    level = q * max(k, 1) / (m * scale)
    rejected = np.zeros(m, dtype=bool)
    rejected[order[:k]] = True
    # adjusted p: min over j ≥ i of m·c·p₍ⱼ₎/j, capped at 1, back in input order
    raw = np.minimum(1.0, sorted_p * m * scale / ranks)
    monotone = np.minimum.accumulate(raw[::-1])[::-1]
    adjusted = np.empty(m)
    adjusted[order] = monotone
    return StepUp(
        tuple(bool(x) for x in rejected),
        tuple(float(x) for x in adjusted),
        float(level),
    )


def choose_method(requested: str, case_sets: Iterable[Iterable[str]]) -> tuple[FdrMethod, str]:
    """The procedure in force and why, for tests over these cases (one set per test)."""
    sets = [frozenset(s) for s in case_sets]
    shared = _shared_case(sets)
    if requested == "bh":
        why = "requested (slices: method: bh)"
        if shared is not None:
            why += f"; case {shared!r} is in more than one test, so BH assumes they are PRDS"
        return "bh", why
    if requested == "by":
        return "by", "requested (slices: method: by): valid under any dependence"
    if shared is None:
        return "bh", "no case is in two tests, so the tests are independent"
    return "by", (
        f"case {shared!r} is in more than one test (overlapping slices or several metrics), "
        "so the tests are dependent: Benjamini-Yekutieli holds under any dependence"
    )


def _shared_case(sets: Sequence[frozenset[str]]) -> str | None:
    seen: set[str] = set()
    for s in sets:
        common = seen & s
        if common:
            return min(common)
        seen |= s
    return None


def one_sided_p(p_two_sided: float, estimate: float, null: float, higher_is_better: bool) -> float:
    """The p of "the change is on the bad side", from an interval-dual two-sided p."""
    bad = estimate < null if higher_is_better else estimate > null
    half = p_two_sided / 2.0
    return half if bad else 1.0 - half
