"""The names a comparison can be asked for, declared once (no numpy: checks import them)."""

from __future__ import annotations

from typing import Final, Literal, TypeVar

from evalkit.errors import InputError

Name = TypeVar("Name", bound=str)

#: What ``paired_bootstrap`` and ``compare_metrics`` run.
Method = Literal["bootstrap", "permutation", "t"]
METHODS: Final[tuple[Method, ...]] = ("bootstrap", "permutation", "t")
#: What a vs_baseline check may name; ``auto`` is the default, paired t
#: (evalkit.stats.procedures chooses the procedure).
GateMethod = Literal["auto", "t", "bootstrap", "permutation"]
GATE_METHODS: Final[tuple[GateMethod, ...]] = ("auto", "bootstrap", "permutation", "t")
Correction = Literal["none", "holm", "maxt"]
CORRECTIONS: Final[tuple[Correction, ...]] = ("none", "holm", "maxt")


def checked(value: object, names: tuple[Name, ...], what: str) -> Name:
    """``value`` as one of ``names``, else one clear line naming them."""
    for known in names:
        if value == known:
            return known
    raise InputError(f"unknown {what} {value!r}: use one of {', '.join(names)}")


def checked_alpha(alpha: object, hint: str = "") -> float:
    """``alpha`` as a level strictly between 0 and 1, else one clear line."""
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 < alpha < 1:
        raise InputError(f"alpha must lie strictly between 0 and 1{hint}, got {alpha!r}")
    return float(alpha)
