"""A toy retrieval step of a RAG system, standing in for the system under test of the
clustered example (issue 46).

The golden set holds several questions about each source document (``metadata.doc_id``).
``v1`` is the baseline; ``v2`` re-chunks the documents: a document whose new chunks are
better helps every question about it, one whose chunks got worse hurts every question
about it, and over all documents nothing changed on average.  Questions about one
document therefore move together, which is what ``clusters: metadata.doc_id`` declares.
The rankings are a deterministic function of the case and document ids, so every run is
the same.
"""

from __future__ import annotations

import hashlib

from evalkit import CallableTarget, GoldenCase

PASSAGES = [f"p-{i:04d}" for i in range(2000)]
SALT = "chunks-6"


def _hash(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16)


def document_shift(doc: str) -> int:
    """How many places v2's re-chunking moves the right passage for one document."""
    return (-2, -1, -1, 0, 0, 1, 1, 2)[_hash(SALT + doc) % 8]


def rank(case: GoldenCase, version: str) -> int:
    """Where the case's relevant passage lands (1 = first)."""
    first = 1 + _hash(case.id) % 5
    if version == "v1":
        return first
    doc = str(case.context.get("metadata", {}).get("doc_id", case.id))
    noise = (-1, 0, 0, 1)[_hash(SALT + case.id) % 4]
    return max(1, first + document_shift(doc) + noise)


def make_target(version: str = "v2") -> CallableTarget:
    def search(case: GoldenCase) -> list[str]:
        (relevant,) = sorted(case.relevant)
        others = [p for p in PASSAGES if p != relevant]
        start = _hash(case.id + version) % len(others)
        ranked = (others[start:] + others[:start])[:11]
        ranked.insert(rank(case, version) - 1, relevant)
        return ranked[:12]

    return CallableTarget(search, name=f"rag-retrieval {version}")
