"""Run artefacts and promotion histories whose trend is known by construction."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from evalkit import CaseResult, RunResult, TargetResponse
from evalkit._spec.artifact import GoldensInfo, RunArtifact, build_artifact, write_artifact
from evalkit._store.history import HistoryEntry, make_entry

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def run(
    name: str,
    values: Mapping[str, Mapping[str, float]],
    *,
    sha: str = "0" * 40,
    case_fps: Mapping[str, str] | None = None,
    config_fingerprint: str | None = "cfg-1",
    config_name: str | None = None,
) -> RunArtifact:
    rows = [
        CaseResult(cid, TargetResponse([cid], latency_ms=10.0), dict(vals))
        for cid, vals in values.items()
    ]
    names = sorted({m for v in values.values() for m in v})
    fps = case_fps or {cid: f"fp-{cid}" for cid in values}
    return build_artifact(
        RunResult(name, rows),
        names,
        goldens=GoldensInfo("set", dict(fps)),
        git=(sha, False),
        seed=1,
        config_fingerprint=config_fingerprint,
        config_name=config_name,
    )


def sha_of(i: int) -> str:
    return f"{i:02d}" * 20


def history(
    tmp: Path,
    runs: Sequence[RunArtifact],
    *,
    start: datetime = T0,
    step: timedelta = timedelta(days=1),
) -> list[HistoryEntry]:
    """Each run written to ``tmp`` and recorded as promoted one ``step`` after the previous."""
    entries = []
    for i, art in enumerate(runs):
        path = write_artifact(art, tmp / f"promotion-{i}.json")
        entries.append(
            make_entry(
                path,
                sha=art.git_commit,
                promoted_at=start + i * step,
                config_fingerprint=art.config_fingerprint,
            )
        )
    return entries
