"""The "did you mean" hint for a mistyped name: one rule for metrics and config keys."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The choice ``word`` most likely misspells, or ``None`` when none is close."""
    match = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return match[0] if match else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest choice, or ``""`` when none is close."""
    match = closest(word, choices)
    return f" (did you mean {match!r}?)" if match is not None else ""
