"""Optional BEIR loaders: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/{split}.tsv``."""

from __future__ import annotations

from evalkit._spec.corpus import (
    DATA,
    DEFAULT_SPLIT,
    ENV_VAR,
    Doc,
    Query,
    data_root,
    load_corpus,
    load_qrels,
    load_qrels_graded,
    load_queries,
)

__all__ = [
    "DATA",
    "DEFAULT_SPLIT",
    "Doc",
    "ENV_VAR",
    "Query",
    "data_root",
    "load_corpus",
    "load_qrels",
    "load_qrels_graded",
    "load_queries",
]
