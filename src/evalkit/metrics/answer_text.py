"""Exact match and token F1 over text answers, as the SQuAD v1.1 evaluation defines them."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Literal

from evalkit.errors import MetricError

__all__ = [
    "NORMALISATIONS",
    "Normalisation",
    "exact_match",
    "normalize_answer",
    "normalizer",
    "token_f1",
    "tokens_f1",
]

Normalisation = Literal["squad", "lower", "none"]
NORMALISATIONS: tuple[Normalisation, ...] = ("squad", "lower", "none")

_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """SQuAD v1.1 normalisation: lower case, no punctuation, no articles, single spaces."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split())


_NORMALISERS: dict[str, Callable[[str], str]] = {
    "squad": normalize_answer,
    "lower": lambda text: " ".join(text.lower().split()),
    "none": lambda text: " ".join(text.split()),
}


def normalizer(name: str, who: str) -> Callable[[str], str]:
    """The normalising function called ``name`` (one of :data:`NORMALISATIONS`)."""
    if name not in NORMALISATIONS:
        raise MetricError(
            f"{who}: normalisation must be one of {', '.join(NORMALISATIONS)}, got {name!r}"
        )
    return _NORMALISERS[name]


def tokens_f1(prediction: Sequence[str], reference: Sequence[str]) -> float:
    """F1 of two token lists (multiset overlap); no shared token gives 0.0."""
    common = Counter(prediction) & Counter(reference)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(prediction)
    recall = same / len(reference)
    return 2 * precision * recall / (precision + recall)


def exact_match(prediction: str, reference: str, normalisation: Normalisation = "squad") -> float:
    """1.0 when prediction and reference are equal after normalisation, else 0.0."""
    norm = normalizer(normalisation, "exact_match")
    return 1.0 if norm(prediction) == norm(reference) else 0.0


def token_f1(prediction: str, reference: str, normalisation: Normalisation = "squad") -> float:
    """SQuAD v1.1 token F1 between one prediction and one reference."""
    norm = normalizer(normalisation, "token_f1")
    return tokens_f1(norm(prediction).split(), norm(reference).split())
