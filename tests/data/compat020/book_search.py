"""A stand-in book search with three rankers (v1, v2, and a broken v0).

The case's `shelf` context decides which books are candidates; the rankers
differ only in the order they return them, so the differences are known.
"""

from __future__ import annotations

from typing import Any

from evalkit import CallableTarget

CATALOGUE: dict[str, list[str]] = {
    "b01": ["old-man-and-the-sea", "moby-dick", "in-the-heart-of-the-sea"],
    "b02": ["treasure-island", "robinson-crusoe", "life-of-pi"],
    "b03": ["hound-of-the-baskervilles", "study-in-scarlet", "moonstone"],
    "b04": ["moonstone", "murders-in-the-rue-morgue", "rebecca"],
    "b05": ["brave-new-world", "nineteen-eighty-four", "we"],
    "b06": ["red-mars", "martian", "dune"],
    "b07": ["emma", "jane-eyre", "middlemarch"],
    "b08": ["war-and-peace", "anna-karenina", "fathers-and-sons"],
}

# v2 moves the relevant books to the front where v1 had a distractor first.
PROMOTED = {"b01", "b02", "b04", "b05", "b07"}


def search(case: Any, version: str) -> list[str]:
    books = list(CATALOGUE[case.id])
    if version == "v0":
        return books[2:]  # drops most relevant books: a real regression
    if version == "v2" and case.id in PROMOTED:
        distractor = books.pop(0)
        books.append(distractor)
    return books


def make_target(version: str = "v2") -> CallableTarget:
    return CallableTarget(lambda case: search(case, version), name=f"books-{version}")
