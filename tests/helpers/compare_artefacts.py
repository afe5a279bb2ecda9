"""Run artefacts of one per-case metric (``ndcg@10``), built in memory for compare tests."""

from __future__ import annotations

import numpy as np

from evalkit._model.results import CaseResult, RunResult
from evalkit._spec.artifact import GoldensInfo, RunArtifact, build_artifact
from evalkit.targets.base import TargetResponse


def artefact(name: str, values: np.ndarray) -> RunArtifact:
    ids = [f"c{i:03d}" for i in range(len(values))]
    rows = [
        CaseResult(cid, TargetResponse([cid], latency_ms=1.0), {"ndcg@10": float(v)})
        for cid, v in zip(ids, values, strict=True)
    ]
    return build_artifact(
        RunResult(name, rows),
        ["ndcg@10"],
        goldens=GoldensInfo("set", {cid: f"fp-{cid}" for cid in ids}),
        git=("abc", False),
        seed=1,
    )
