"""Score an existing TREC run file against qrels: ``evalkit score`` (and the older
``evalkit run --trec-run``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit._app.provenance import git_state
from evalkit._util.suggest import did_you_mean
from evalkit.errors import ConfigError

if TYPE_CHECKING:
    from evalkit._spec.artifact import RunArtifact
    from evalkit._spec.trec import TrecScoring
    from evalkit.metrics.batch import QuerySelection

QUERY_SELECTIONS: tuple[QuerySelection, ...] = ("both", "qrels", "run")


@dataclass(frozen=True)
class TrecScored:
    """A scored TREC run: the artefact, where it was written, and the scoring's notes."""

    artifact: RunArtifact
    path: Path
    scoring: TrecScoring
    document: str | None = None  # the artefact's text when OUT is '-' (stdout), unwritten


def metric_names(metrics: str) -> list[str]:
    """``ndcg@10,map@100`` -> the metric names; none is a usage error."""
    names = [m.strip() for m in metrics.split(",") if m.strip()]
    if not names:
        raise ConfigError("--metrics names no metric; e.g. --metrics ndcg@10,map@100")
    return names


def check_query_selection(queries: str) -> QuerySelection:
    for known in QUERY_SELECTIONS:
        if queries == known:
            return known
    raise ConfigError(
        f"--queries must be both, qrels or run, got {queries!r}"
        f"{did_you_mean(queries, QUERY_SELECTIONS)}"
    )


def score_trec_file(
    trec_run: Path,
    qrels: Path,
    metrics: str,
    out: Path,
    *,
    relevance_level: int = 1,
    queries: str = "both",
) -> TrecScored:
    """Score ``trec_run`` against ``qrels`` (no target involved) and write the run artefact
    to ``out`` (``-``: not written; :attr:`TrecScored.document` holds it for the caller to
    print)."""
    from evalkit._model.registry import resolve_metrics
    from evalkit._spec.artifact import build_artifact, write_artifact
    from evalkit._spec.trec import score_trec
    from evalkit._util.atomic import check_writable
    from evalkit._util.paths import refuse_overwriting_inputs
    from evalkit._util.stdout_path import is_stdout

    selection = check_query_selection(queries)
    names = metric_names(metrics)
    check_writable(out)
    refuse_overwriting_inputs({"--out": out}, {"run file": trec_run, "qrels": qrels})
    case_defs, _ = resolve_metrics(names)
    scoring = score_trec(
        trec_run,
        qrels,
        [d.name for d in case_defs],
        relevance_level=relevance_level,
        queries=selection,
        name=trec_run.name,
    )
    # relevance_level is part of each metric's identity (docs/design/metric-identity.md)
    art = build_artifact(
        scoring.result,
        names,
        target_name=trec_run.name,
        git=git_state(),
        params={"relevance_level": relevance_level},
    )
    if is_stdout(out):  # the caller prints it: nothing on disk
        from evalkit._spec.artifact import artifact_bytes

        return TrecScored(art, out, scoring, artifact_bytes(art, "stdout").decode())
    return TrecScored(art, write_artifact(art, out), scoring)
