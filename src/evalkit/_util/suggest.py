"""The "did you mean" hint for a mistyped name: one rule for metrics and config keys."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def _other_case(word: str, choices: list[str]) -> str | None:
    """The choice that is ``word`` in other letter case (``dna`` for ``DNA``), if any."""
    folded = word.casefold()
    return next((c for c in choices if c != word and c.casefold() == folded), None)


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The choice ``word`` most likely misspells, or ``None`` when none is close."""
    listed = list(choices)
    # difflib compares characters exactly: to it "DNA" shares nothing with "dna"
    same_letters = _other_case(word, listed)
    if same_letters is not None:
        return same_letters
    match = difflib.get_close_matches(word, listed, n=1, cutoff=0.6)
    return match[0] if match else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest choice, or ``""`` when none is close."""
    match = closest(word, choices)
    if match is None:
        return ""
    other_case = match != word and match.casefold() == word.casefold()
    return f" (did you mean {match!r}?{' it differs only in letter case' if other_case else ''})"
