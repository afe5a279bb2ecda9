"""``evalkit power``: how large a true change an eval of this size detects, and how often."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalkit.cli.common import ClusterOpt, DebugOpt, say, say_prose


def power(
    artefact: Annotated[
        Path, typer.Argument(metavar="RUN", help="A run artefact (the candidate).")
    ],
    baseline: Annotated[
        Path | None,
        typer.Argument(metavar="BASELINE", help="Baseline artefact: pairs cases for the real σ_d."),
    ] = None,
    metric: Annotated[str, typer.Option(help="Per-case metric to analyse.")] = "ndcg@10",
    effects: Annotated[
        str | None, typer.Option(help="Comma-separated true effects, e.g. 0.02,0.05,0.1.")
    ] = None,
    n: Annotated[int | None, typer.Option(min=2, help="Eval size to plan for.")] = None,
    alpha: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Two-sided significance level.")
    ] = 0.05,
    n_sim: Annotated[int, typer.Option(min=0, help="Simulated evals per effect.")] = 1000,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the simulations.")] = 42,
    cluster: ClusterOpt = None,
    debug: DebugOpt = False,  # noqa: ARG001 (handled by its callback)
) -> None:
    """How large a true change this eval detects, and how often.

    Both simulated (--n-sim evals per effect) and analytic (normal approximation).
    """
    from evalkit._app.inspect_runs import power_of_files

    table = power_of_files(
        artefact,
        baseline,
        metric=metric,
        effects=effects,
        n=n,
        alpha=alpha,
        n_sim=n_sim,
        seed=seed,
        cluster=cluster,
    )
    say_prose(
        f"{metric}: n = {table.n} cases, σ_d = {table.sd_diff:.4g} ({table.sd_source}), "
        f"alpha = {table.alpha:g}"
    )
    say_prose(f"smallest effect detected with {table.target_power:.0%} power: ±{table.mde:.4g}\n")
    header = f"{'true effect':>12}  {'detected':>9}  {'analytic':>9}"
    say(header)
    say("-" * len(header))
    for row in table.rows:
        simulated = "-" if row.simulated is None else f"{row.simulated:.0%}"
        say(f"{row.effect:>+12.4g}  {simulated:>9}  {row.analytic:>9.0%}")
    if table.n_sim:
        say_prose(
            f"\n(detected: {table.n_sim} simulated evals per effect, {table.method} at "
            f"alpha {table.alpha:g}; analytic: "
            + (
                "t with the clusters' df)"
                if table.method == "cluster-t"
                else "normal approximation)"
            )
        )
