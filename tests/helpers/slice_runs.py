"""Runs with known slice effects: the aggregate improves while one slice regresses."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from evalkit import CaseResult, RunResult, TargetResponse, register_metric
from evalkit._model.slices import SliceAssignment
from evalkit._spec.artifact import GoldensInfo, RunArtifact, build_artifact

METRIC = "slice_score"
register_metric(METRIC, higher_is_better=True)(lambda _r, _c: 0.0)


def assignment(tags: dict[str, list[str]]) -> SliceAssignment:
    return SliceAssignment(("tags",), {cid: {"tags": tuple(v)} for cid, v in tags.items()})


def artefact(
    name: str, values: dict[str, float], slices: SliceAssignment | None = None
) -> RunArtifact:
    rows = [
        CaseResult(cid, TargetResponse([cid], latency_ms=1.0), {METRIC: v})
        for cid, v in values.items()
    ]
    info = GoldensInfo("set", {cid: f"fp-{cid}" for cid in values}, slices)
    return build_artifact(RunResult(name, rows), [METRIC], goldens=info, seed=1)


def story(seed: int = 3) -> tuple[RunArtifact, RunArtifact, SliceAssignment]:
    """120 cases: 40 billing ones lose 0.15, the 80 others gain 0.1 (aggregate +0.017);
    60 'long' cases overlapping both, 6 'rare' ones (too few to test) and 3 'new' cases
    absent from the baseline."""
    rng = np.random.default_rng(seed)
    ids = [f"c{i:03d}" for i in range(123)]
    tags = {
        cid: (["billing"] if i < 40 else ["search"])
        + (["long"] if i % 2 == 0 else [])
        + (["rare"] if i % 20 == 1 else [])
        for i, cid in enumerate(ids[:120])
    }
    for cid in ids[120:]:
        tags[cid] = ["new"]
    level = rng.uniform(0.3, 0.7, len(ids))
    base = {cid: float(level[i] + 0.05 * rng.standard_normal()) for i, cid in enumerate(ids[:120])}
    cand = {
        cid: float(level[i] + 0.05 * rng.standard_normal() + (-0.15 if i < 40 else 0.1))
        for i, cid in enumerate(ids)
    }
    slices = assignment(tags)
    return artefact("candidate", cand, slices), artefact("baseline", base), slices


def write_project(tmp_path: Path, goldens: str, checks: str, slices: str) -> Path:
    """An evalkit.yaml (``slices`` on its line 6) beside goldens.jsonl and checks.yaml."""
    (tmp_path / "goldens.jsonl").write_text(goldens)
    (tmp_path / "checks.yaml").write_text(checks)
    config = tmp_path / "evalkit.yaml"
    config.write_text(
        "goldens: goldens.jsonl\nchecks: checks.yaml\nmetrics: [recall@1]\n"
        f'target:\n  python: "m:f"\n{slices}\n'
    )
    return config
