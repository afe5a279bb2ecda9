"""TREC run files and qrels: read, write (plain or ``.gz``), and score."""

from __future__ import annotations

from evalkit._spec.trec import (
    FloatArray,
    PathLike,
    RunData,
    ScoreDtype,
    TrecFormatError,
    TrecRun,
    TrecScoring,
    read_qrels,
    read_run,
    score_trec,
    score_trec_run,
    write_qrels,
    write_run,
)

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
