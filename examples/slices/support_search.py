"""A toy help-centre search, standing in for the system under test of the slices example.

Two versions of one ranker: ``v1`` (the baseline) and ``v2`` (the candidate), which ranks
the right article higher for most questions, and lower for billing questions.  On the
whole eval v2 looks fine; slice by ``tags`` and the billing slice has clearly regressed.
The rankings are a deterministic function of the case id, so every run is the same.
"""

from __future__ import annotations

import hashlib

from evalkit import CallableTarget, GoldenCase

ARTICLES = [f"kb-{i:03d}" for i in range(400)]


def _hash(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16)


def _rank(case: GoldenCase, version: str) -> int:
    """Where the case's relevant article lands (1 = first)."""
    h = _hash(case.id)
    first = 1 + h % 6
    if version == "v1":
        return first
    tags = case.context.get("tags", [])
    if "billing" in tags:  # v2's new tokenizer splits invoice numbers: billing gets worse
        return first + 2 + (h >> 8) % 3
    return max(1, first - 1) if (h >> 16) % 3 else first + 1


def make_target(version: str = "v2") -> CallableTarget:
    def search(case: GoldenCase) -> list[str]:
        (relevant,) = sorted(case.relevant)
        others = [a for a in ARTICLES if a != relevant]
        start = _hash(case.id + version) % len(others)
        ranked = (others[start:] + others[:start])[:9]
        ranked.insert(_rank(case, version) - 1, relevant)
        return ranked

    return CallableTarget(search, name=f"support-search {version}")
