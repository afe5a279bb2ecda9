"""Generated qrels and runs, and pytrec_eval (trec_eval 9.0.8) as the reference.

The generator deliberately produces the cases issue 7 names: score ties broken
by doc id, graded and negative labels, unjudged documents, empty rankings,
queries with no relevant document, and rankings shorter than k.  Scores are
multiples of 1/4, exactly representable in float32, so the float32 ordering
of pytrec_eval and the float64 ordering of trec_eval 10.0 agree on them.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pytrec_eval

# evalkit family -> trec_eval measure (recip_rank is uncut: compared on runs cut at k)
TREC_MEASURE = {
    "precision": "P",
    "recall": "recall",
    "ndcg": "ndcg_cut",
    "map": "map_cut",
    "hit_rate": "success",
}
KS = (1, 2, 3, 5, 10, 40)

Qrels = dict[str, dict[str, int]]
ScoredRun = dict[str, dict[str, float]]

# Doc ids whose byte order differs from naive expectations: lengths, case, UTF-8.
_ID_STEMS = ("d", "D", "doc-", "d1", "é", "z")


@dataclass
class Generated:
    qrels: Qrels
    run: ScoredRun


def generate(seed: int, n_queries: int = 40) -> Generated:
    """Random graded qrels and a scored run covering the edge cases above."""
    rng = random.Random(seed)
    qrels: Qrels = {}
    run: ScoredRun = {}
    for q in range(n_queries):
        qid = f"q{q}"
        pool = [f"{rng.choice(_ID_STEMS)}{i}" for i in range(rng.randint(1, 25))]
        pool = list(dict.fromkeys(pool))
        kind = rng.random()
        judged = rng.sample(pool, rng.randint(1, len(pool)))
        if kind < 0.15:  # judged, but nothing relevant
            qrels[qid] = {d: rng.choice((-1, 0)) for d in judged}
        else:
            qrels[qid] = {d: rng.choice((-2, -1, 0, 0, 1, 1, 2, 3)) for d in judged}
        if max(qrels[qid].values()) < -1:
            # trec_eval 9.0.8 crashes (memset of a negative size) when every grade of
            # a query is below -1; evalkit scores such a query as zeros (tested apart).
            qrels[qid][judged[0]] = 0
        if 0.15 <= kind < 0.25:
            run[qid] = {}  # an empty ranking
            continue
        if 0.25 <= kind < 0.3:
            continue  # judged but not ranked
        retrieved = rng.sample(pool, rng.randint(0, len(pool)))
        retrieved += [f"unjudged{i}" for i in range(rng.randint(0, 8))]
        # Few distinct scores: many exact ties, broken by doc id.
        run[qid] = {d: rng.randint(0, 12) / 4 for d in retrieved}
    # Ranked but never judged: trec_eval skips these queries.
    run["unjudged-query"] = {"d1": 1.0, "d2": 0.5}
    return Generated(qrels, run)


def trec_order(scores: Mapping[str, float]) -> list[str]:
    """trec_eval's ranking: score descending, equal scores by doc id descending (bytes)."""
    return sorted(scores, key=lambda d: (scores[d], d.encode("utf-8")), reverse=True)


def as_scored(ranking: Sequence[str]) -> dict[str, float]:
    """A ranked list as strictly falling scores (so trec_eval keeps its order)."""
    return {doc: float(len(ranking) - i) for i, doc in enumerate(ranking)}


def reference(
    qrels: Qrels, run: ScoredRun, measures: set[str], relevance_level: int = 1
) -> dict[str, dict[str, float]]:
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=relevance_level)
    return evaluator.evaluate(run)


def cut_measures(ks: Sequence[int] = KS) -> set[str]:
    cut = ",".join(str(k) for k in ks)
    return {f"{m}.{cut}" for m in TREC_MEASURE.values()} | {"recip_rank"}


def expected(values: Mapping[str, float], family: str, k: int, ranking_len: int) -> float | None:
    """pytrec_eval's value for ``family@k``; ``None`` for mrr@k when k does not cover
    the ranking (that case is checked on a run cut at k)."""
    if family == "mrr":
        return values["recip_rank"] if k >= ranking_len else None
    return values[f"{TREC_MEASURE[family]}_{k}"]
