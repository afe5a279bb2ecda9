"""The system under test, as evalkit calls it: replace ``search`` with a call to yours.

evalkit calls ``make_target()`` once, then the target once per golden case. A retrieval
target returns document ids, best first (scored by recall@k, ndcg@k, ...); a target that
answers in text returns a string (scored by answer metrics or an LLM judge).
"""

from __future__ import annotations

from evalkit import CallableTarget, GoldenCase

# A stand-in for your index: document id -> text.
DOCUMENTS = {
    "returns": "return an item within 30 days for a refund",
    "shipping": "delivery and shipping times for your order",
    "password": "reset a forgotten password",
    "invoice": "download an invoice for an order",
    "cancel": "cancel an order before it ships",
}


def search(query: str) -> list[str]:
    """Document ids by how many words they share with ``query`` (ties by id)."""
    words = set(query.lower().split())
    return sorted(DOCUMENTS, key=lambda doc: (-len(words & set(DOCUMENTS[doc].split())), doc))


def rank(case: GoldenCase) -> list[str]:
    return search(case.query)


def make_target() -> CallableTarget:
    return CallableTarget(rank, name="my-search")
