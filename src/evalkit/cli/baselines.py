"""The baseline's life: ``evalkit promote``, ``evalkit history`` and ``evalkit pin``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from evalkit.cli.common import (
    DEFAULT_CONFIG,
    ConfigOpt,
    DebugOpt,
    say,
    say_lines,
    write_document,
)


def promote(
    run_file: Annotated[
        Path | None,
        typer.Argument(
            metavar="RUN", help="The run artefact to promote (default: the config's output)."
        ),
    ] = None,
    config: ConfigOpt = DEFAULT_CONFIG,
    debug: DebugOpt = False,  # noqa: ARG001 (handled by its callback)
) -> None:
    """Make a run the configured baseline file, like a snapshot update.

    The file is the config's baseline: {path: …}.  Refuses a run with failed
    cases, a shard, or a run of another config; the gate then compares every
    later candidate with this run.
    """
    from evalkit._app.pipeline import promote_run
    from evalkit._spec.config import load_config

    done = promote_run(load_config(config), run_file)
    art = done.artifact
    commit = (
        f"commit {art.git_commit[:7]}{' (dirty)' if art.git_dirty else ''}, "
        if (art.git_commit)
        else ""
    )
    say(
        f"promoted {done.run} to the baseline {done.baseline} "
        f"({len(art.result)} cases, {commit}created {art.created_at})"
    )
    if done.replaced is not None and done.run.resolve() != done.baseline.resolve():
        old = done.replaced
        # "of commit …, created …" with a commit, plain "created …" without one
        of_commit = f" of commit {old.git_commit[:7]}," if old.git_commit else ""
        say(f"it replaces the baseline{of_commit} created {old.created_at}")


def history(
    config: ConfigOpt = DEFAULT_CONFIG,
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric",
            "-m",
            metavar="<metric>",
            help="Metric to trend (repeatable; default: the checked ones).",
        ),
    ] = None,
    candidate: Annotated[
        Path | None, typer.Option(help="A run artefact drawn as the trend's last point.")
    ] = None,
    limit: Annotated[int, typer.Option(min=0, help="Newest promotions shown (0: all).")] = 20,
    json_out: Annotated[
        Path | None,
        typer.Option("--json", help="Write promotions and trends as JSON here ('-': stdout)."),
    ] = None,
    debug: DebugOpt = False,  # noqa: ARG001 (handled by its callback)
) -> None:
    """List the baseline's promotions and each checked metric's trend.

    Per metric and promotion: its value, and the change from the promotion
    before with its confidence interval.
    """
    from evalkit._app.promotions import (
        github_access_from_env,
        history_json,
        history_view,
        render_history,
    )
    from evalkit._spec.config import load_config

    view = history_view(
        load_config(config),
        metrics=metric,
        candidate=candidate,
        limit=limit,
        access=github_access_from_env(os.environ),
    )
    from evalkit._util.stdout_path import is_stdout

    if is_stdout(json_out):  # stdout holds only the document: the listing goes to stderr
        typer.echo(render_history(view), err=True)
    else:
        say_lines(render_history(view))
    if json_out is not None:
        write_document(json_out, history_json(view))


def pin(
    ref: Annotated[
        str,
        typer.Argument(
            metavar="REF",
            help="A tag or release (v1.2), a date (2026-11-30) or '3 promotions ago'.",
        ),
    ],
    config: ConfigOpt = DEFAULT_CONFIG,
    debug: DebugOpt = False,  # noqa: ARG001 (handled by its callback)
) -> None:
    """Pin a promotion as the drift checks' reference (until re-pinned)."""
    from evalkit._app.promotions import pin_reference
    from evalkit._spec.config import load_config

    done = pin_reference(load_config(config), ref)
    # done.detail starts "reference <path>:", which after "pinned the reference" said it twice
    say(f"pinned the reference in {done.location}: {done.record.describe()}")
