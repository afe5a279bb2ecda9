"""The 300-case report fixture's system under test: one ranker in three versions.

Case ``i`` has one relevant document, ``d<i>``, which the baseline ranks at a place
that cycles through 1..12 (past 10: not retrieved).  ``pass`` moves 30 % of the cases
(two in three up a place, one in three down): 70 % tie.  ``fail`` moves the same cases,
mostly down, and the ``tail`` slice's the furthest.
"""

from __future__ import annotations

from evalkit import CallableTarget, TargetResponse


def baseline_rank(i: int) -> int:
    return 1 + (i * 7) % 12


def rank_of(i: int, version: str) -> int:
    r = baseline_rank(i)
    if version == "v1" or i % 10 < 7:
        return r
    if version == "pass":
        return max(1, r - 1) if i % 10 in (7, 8) else r + 1
    # fail: up one place on a third of the moved cases, down on the rest
    if i % 10 == 7:
        return max(1, r - 1)
    return r + (5 if i > 150 else 2)


def make_target(version: str = "v1") -> CallableTarget:
    def rank(case):  # type: ignore[no-untyped-def]
        i = int(case.id)
        place = rank_of(i, version)
        filler = [f"x{i}-{k}" for k in range(1, 21)]
        ids = [*filler[: place - 1], f"d{i}", *filler[place - 1 :]]
        return TargetResponse(ids[:20], latency_ms=1.0)

    return CallableTarget(rank, name=f"ranker-{version}")
