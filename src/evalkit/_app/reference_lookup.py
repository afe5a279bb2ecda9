"""Finding what drift checks compare with, and the trend the report draws under them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.gate.reference import Reference, ReferenceStatus, wants_reference
from evalkit.gate.trend import DriftTrend

if TYPE_CHECKING:
    from evalkit._spec.checks import CheckSpec
    from evalkit._spec.config import LoadedConfig
    from evalkit._store.protocol import BaselineFetch, BaselineStore
    from evalkit.gate.model import GateReport


def reference_from_fetch(fetch: BaselineFetch, config_name: str | None = None) -> Reference:
    """The gate's :class:`Reference` for a store's answer (reads the artefact when found)."""
    from evalkit._spec.artifact import read_artifact
    from evalkit.gate.inputs import refuse_other_config

    if fetch.status == "found" and fetch.path is not None:
        art = read_artifact(Path(fetch.path))
        if config_name is not None:
            refuse_other_config(art, config_name, f"reference ({fetch.detail})")
        sha = fetch.sha or art.git_commit
        return Reference("found", art, fetch.detail, fetch.source, sha, Path(fetch.path))
    status: ReferenceStatus = "expired" if fetch.status == "expired" else "missing"
    return Reference(status, None, fetch.detail, fetch.source, fetch.sha)


def find_reference(
    config: LoadedConfig,
    override: str | Path | None,
    checks: Sequence[CheckSpec],
    store: Callable[[], BaselineStore],
) -> Reference | None:
    """The reference a local gate compares drift checks with (None: no check needs one)."""
    from evalkit._spec.artifact import read_artifact
    from evalkit._store.protocol import FetchRequest
    from evalkit.gate.inputs import refuse_other_config

    if override is not None:
        origin = f"reference {override}"
        art = read_artifact(override)
        refuse_other_config(art, config.name, origin)
        return Reference("found", art, origin, "file", art.git_commit, Path(override))
    if not wants_reference(checks):
        return None
    fetched = store().fetch_reference(FetchRequest(config.name, config.fetched_dir))
    return reference_from_fetch(fetched, config.name)


def report_trends(
    config: LoadedConfig,
    report: GateReport,
    candidate: Path | None,
    reference: Reference | None,
    *,
    store: BaselineStore,
    work: Path | None = None,
) -> DriftTrend:
    """The HTML report's trend of each drift-checked metric, the candidate last."""
    from evalkit._app.promotions import promotion_trends
    from evalkit.errors import EvalkitError

    metrics = list(dict.fromkeys(v.metric for v in report.verdicts if v.kind == "vs_reference"))
    if report.reference is None or not metrics:
        return DriftTrend()
    try:
        history, trends = promotion_trends(
            config, store, work or config.fetched_dir, metrics, candidate=candidate
        )
    except EvalkitError as exc:
        return DriftTrend(note=f"trend across promotions not drawn: {exc}")
    entries = history.entries
    if not entries:
        return DriftTrend(note=f"trend across promotions not drawn: {history.detail}")
    pinned = _digest(reference.path) if reference is not None and reference.path else None
    at = next((i for i, e in enumerate(entries) if pinned and _digest(e.path) == pinned), None)
    return DriftTrend(trends, None, at)


def _digest(path: Path) -> str | None:
    import hashlib

    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None
