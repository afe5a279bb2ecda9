"""``evalkit score RUN QRELS``: score an existing TREC run file, no target, no config.

``evalkit run --trec-run RUN --qrels QRELS ...`` still works (:func:`score_trec_from_run`),
with the same output and exit codes.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalkit.cli.common import (
    DEFAULT_CONFIG,
    DebugOpt,
    err,
    nothing_to_tear_down,
    say,
    write_document,
)

if TYPE_CHECKING:
    from evalkit._app.runs import RunAsk
    from evalkit._spec.trec import TrecScoring

# Query ids a note names before it only counts the rest.
SHOWN_QUERY_IDS = 10


def score(
    trec_run: Annotated[
        Path, typer.Argument(metavar="RUN", help="A TREC run file (qid Q0 docid rank score tag).")
    ],
    qrels: Annotated[
        Path,
        typer.Argument(
            metavar="QRELS",
            help="TREC qrels (qid 0 docid grade), or BEIR qrels (header: query-id corpus-id "
            "score); grades are kept.",
        ),
    ],
    metrics: Annotated[str, typer.Option(help="Comma-separated metrics, e.g. ndcg@10,map@100.")],
    out: Annotated[Path, typer.Option(help="Where to write the run artefact ('-': stdout).")],
    relevance_level: Annotated[
        int, typer.Option(min=1, help="Lowest grade counted as relevant.")
    ] = 1,
    queries: Annotated[
        str,
        typer.Option(
            "--queries",
            metavar="both|qrels|run",
            help="The queries scored: both (default, as trec_eval): ranked and judged; qrels "
            "(trec_eval -c): every judged one, an unranked one as an empty ranking (0); run: "
            "every ranked one, all must be judged.",
        ),
    ] = "both",
    debug: DebugOpt = False,  # noqa: ARG001 (handled by its callback)
) -> None:
    """Score a TREC run file against qrels and write a run artefact.

    Per-query values equal trec_eval's; the artefact compares, gates and shows like
    any run.  Queries the two files do not share are named on stderr.
    """
    _score(trec_run, qrels, metrics, out, relevance_level, queries)


def score_trec_from_run(
    ask: RunAsk,
    trec_run: Path | None,
    qrels: Path | None,
    metrics: str | None,
    relevance_level: int,
    queries: str | None,
) -> None:
    """``evalkit run --trec-run RUN --qrels QRELS --metrics ... --out FILE``: the older
    spelling of ``evalkit score``, refusing the flags that only running a target reads."""
    from evalkit._app.trec import check_query_selection
    from evalkit.errors import ConfigError

    for flag, given in (
        ("--config", ask.config != DEFAULT_CONFIG),
        ("--concurrency", ask.concurrency is not None),
        ("--rate-limit", ask.rate_limit is not None),
        ("--case-timeout", ask.case_timeout is not None),
        ("--resume", ask.resume),
        ("--shard", ask.shard is not None),
        ("--judge-cache-only", ask.cache_only),
        ("--allow-failed", ask.allow_failed),
        ("-k/--case", ask.cases is not None),
    ):
        if given:
            # Scoring a file runs no target: a target flag here would be silently ignored.
            raise ConfigError(
                f"{flag} applies to running a target; scoring a TREC run "
                f"(--trec-run/--qrels) runs none: drop {flag}"
            )
    check_query_selection(queries or "both")
    needed = {"--trec-run": trec_run, "--qrels": qrels, "--metrics": metrics, "--out": ask.out}
    if trec_run is None or qrels is None or metrics is None or ask.out is None:
        missing = ", ".join(flag for flag, value in needed.items() if value is None)
        raise ConfigError(f"scoring a TREC run needs {missing}")
    _score(trec_run, qrels, metrics, ask.out, relevance_level, queries or "both")


def _score(
    trec_run: Path, qrels: Path, metrics: str, out: Path, relevance_level: int, queries: str
) -> None:
    from evalkit._app.trec import score_trec_file

    done = score_trec_file(
        trec_run, qrels, metrics, out, relevance_level=relevance_level, queries=queries
    )
    scored = f"{len(done.artifact.result)} queries scored from {trec_run}"
    if done.document is not None:  # OUT is '-': the artefact holds stdout, the line stderr
        write_document(done.path, done.document)
        err(f"wrote the run artefact to stdout ({scored})")
    else:
        say(f"wrote {done.path} ({scored})")
    for note in trec_query_notes(done.scoring, trec_run.name):
        err(f"note: {note}")
    nothing_to_tear_down.set()


def trec_query_notes(scoring: TrecScoring, run_name: str) -> list[str]:
    """What scoring did with the queries the run and the qrels do not share.

    Said whichever --queries was chosen: a judged query that silently vanishes from the
    mean makes a system look better than trec_eval -c says it is.
    """

    def ids(items: tuple[str, ...]) -> str:
        shown = ", ".join(items[:SHOWN_QUERY_IDS])
        rest = len(items) - SHOWN_QUERY_IDS
        return shown + (f" (+{rest} more)" if rest > 0 else "")

    def count(n: int, what: str) -> str:
        return f"{n} {what} quer{'y' if n == 1 else 'ies'}"

    notes: list[str] = []
    unranked = scoring.unranked
    if unranked and scoring.queries == "qrels":
        notes.append(
            f"{count(len(unranked), 'judged')} with no ranking in {run_name} scored as an "
            f"empty ranking (0, as trec_eval -c): {ids(unranked)}"
        )
    elif unranked:
        notes.append(
            f"{count(len(unranked), 'judged')} with no ranking in {run_name} left out: "
            f"{ids(unranked)}; --queries qrels scores them as 0 (trec_eval -c)"
        )
    if scoring.unjudged:
        notes.append(
            f"{count(len(scoring.unjudged), 'ranked')} not in the qrels left out: "
            f"{ids(scoring.unjudged)}"
        )
    return notes
