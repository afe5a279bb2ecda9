"""Reading finished runs: ``evalkit compare``, ``evalkit power`` and ``evalkit export``.

Each function reads the artefacts, refuses bad input before any work, and returns what
the command prints; none runs a target.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from evalkit._util.limits import MAX_SIMULATED_CASES
from evalkit.errors import ConfigError, InputError

if TYPE_CHECKING:
    from evalkit._spec.artifact import RunArtifact
    from evalkit.stats.power import PowerTable


@dataclass(frozen=True)
class Compared:
    """``evalkit compare``: the table as text, and the HTML page when one was asked for."""

    text: str
    html: str | None


def compare_files(
    runs: Sequence[Path],
    reference: Path | None,
    *,
    correction: str = "holm",
    fmt: str = "text",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int = 42,
    html: Path | None = None,
    by: str | None = None,
    slice_metrics: Sequence[str] = (),
    width: int | None = None,
    cluster: str | None = None,
) -> Compared:
    """Every metric the runs share, each run against the reference, rendered as ``fmt``.

    ``by``: also the gate's per-slice family over those slice dimensions (``tags`` or
    ``tags,lang``; two runs, text), over ``slice_metrics`` (default: every shared metric).
    ``cluster``: infer by the cases' clusters under that field (``--cluster``).
    ``width``: the text fits it (one block per metric where the table would not); None:
    the table at its natural width.
    """
    from evalkit._spec.artifact import read_artifact
    from evalkit._util.atomic import check_writable
    from evalkit._util.paths import refuse_overwriting_inputs
    from evalkit.gate.compare import choose_reference, compare_runs
    from evalkit.report.compare_tables import check_format, render_compare_table

    check_format(fmt)
    if not 0.0 < alpha < 1.0:  # before any run is read; NaN fails both comparisons
        raise InputError(f"--alpha must lie strictly between 0 and 1, got {alpha:g}")
    compared, ref = choose_reference(runs, reference, html=html)
    if slice_metrics and by is None:
        raise InputError("--metric chooses the metrics of --by's slice table: add --by DIMENSION")
    if by is not None and (len(compared) != 1 or fmt != "text"):
        raise InputError(
            "--by compares two runs in the text format: give one run and the reference, "
            "without --format"
        )
    check_writable(html)
    refuse_overwriting_inputs(
        {"--html": html},
        {f"reference run {ref}": ref, **{f"compared run {p}": p for p in compared}},
    )
    arts = [read_artifact(path) for path in compared]
    base = read_artifact(ref)
    table = compare_runs(
        arts,
        base,
        correction=correction,
        alpha=alpha,
        n_resamples=n_resamples,
        seed=seed,
        cluster=cluster,
    )
    text = render_compare_table(table, fmt, width=width)
    if by is not None:  # the gate's per-slice family (gate/slices.py), on these two runs
        from evalkit.gate.compare import compare_slices
        from evalkit.report.slices import slice_text

        dims = [d.strip() for d in by.split(",") if d.strip()]
        slices = compare_slices(
            arts[0],
            base,
            dims,
            metrics=slice_metrics,
            n_resamples=n_resamples,
            seed=seed,
            cluster=cluster,
        )
        text = text.rstrip("\n") + "\n\n" + slice_text(slices, width)
    page = None
    if html is not None:
        from evalkit.report.html import render_compare_html

        page = render_compare_html(list(table.comparisons[0].rows), arts[0], base)
    return Compared(text, page)


def parse_effects(effects: str | None) -> list[float] | None:
    """``0.02,0.05`` -> the effects; None: the default multiples of the detectable effect."""
    if effects is None:
        return None
    try:
        return [float(x) for x in effects.split(",") if x.strip()]
    except ValueError:
        raise ConfigError(
            f"--effects must be numbers separated by commas, got {effects!r}"
        ) from None


def power_of_files(
    artefact: Path,
    baseline: Path | None,
    *,
    metric: str,
    effects: str | None = None,
    n: int | None = None,
    alpha: float = 0.05,
    n_sim: int = 1000,
    seed: int = 42,
    cluster: str | None = None,
) -> PowerTable:
    """How large a true change the eval of ``artefact`` detects, and how often.

    ``cluster`` (``--cluster FIELD``): by the cases' clusters under that field, the way a
    gate with ``clusters:`` decides (:mod:`evalkit.stats.cluster_power`)."""
    from evalkit._spec.artifact import read_artifact
    from evalkit.stats.significance import power_table

    chosen = parse_effects(effects)
    a = read_artifact(artefact)
    b = read_artifact(baseline) if baseline is not None else None
    size = n if n is not None else len(a.result)
    if size * n_sim > MAX_SIMULATED_CASES:
        raise ConfigError(
            f"--n-sim {n_sim} evals of {size} cases is {size * n_sim:,} simulated cases, more "
            f"than {MAX_SIMULATED_CASES:,}; lower --n-sim, or pass --n-sim 0 for the analytic "
            "figures only"
        )
    if cluster is not None:
        from evalkit.stats.cluster_power import cluster_power_table
        from evalkit.stats.clustered_decide import cluster_labels

        if b is None:
            raise InputError(
                "--cluster needs the BASELINE run: power by cluster reads the paired differences"
            )
        if n is not None:
            raise InputError(
                "--n plans in cases; with --cluster the eval's size is its clusters: drop --n"
            )
        return cluster_power_table(
            a.result,
            b.result,
            metric=metric,
            clusters=cluster_labels(cluster, a, b),
            effects=chosen,
            alpha=alpha,
            n_sim=n_sim,
            seed=seed,
        )
    try:
        return power_table(
            a.result,
            None if b is None else b.result,
            metric=metric,
            effects=chosen,
            n=n,
            alpha=alpha,
            n_sim=n_sim,
            seed=seed,
        )
    except InputError as exc:
        # The statistics name runs; two artefacts of one config share a run name.
        files = str(artefact) if baseline is None else f"{artefact} vs {baseline}"
        raise type(exc)(f"{files}: {exc}") from None


def export_csv(
    artefact: Path, csv: Path | TextIO, *, include_output: bool = False
) -> tuple[RunArtifact, Path | None]:
    """Write a run's per-case rows as CSV to a file or an open stream: the run, and the path."""
    from evalkit._spec.artifact import read_artifact
    from evalkit._spec.export import write_csv

    if isinstance(csv, Path):
        from evalkit._util.atomic import check_writable
        from evalkit._util.paths import refuse_overwriting_inputs

        check_writable(csv)
        refuse_overwriting_inputs({"--csv": csv}, {"artefact": artefact})
    art = read_artifact(artefact)
    return art, write_csv(art.result, csv, include_output=include_output)
