"""TREC run files and qrels: read, write (plain or ``.gz``), and score."""

from __future__ import annotations

from evalkit._spec.trec import (
    RunData,
    TrecScoring,
    read_run,
    score_trec,
    score_trec_run,
    write_qrels,
    write_run,
)
from evalkit._spec.trec_io import PathLike, ScoreDtype, TrecFormatError, read_qrels
from evalkit._spec.trec_run import FloatArray, TrecRun

__all__ = [
    "FloatArray",
    "PathLike",
    "RunData",
    "ScoreDtype",
    "TrecFormatError",
    "TrecRun",
    "TrecScoring",
    "read_qrels",
    "read_run",
    "score_trec",
    "score_trec_run",
    "write_qrels",
    "write_run",
]
