"""The GitHub Action's entry points: ``evalkit action`` and ``evalkit comment``.

Both hand the environment to :mod:`evalkit.action`, which owns what they do.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from evalkit.cli.common import DebugOpt


def action(
    debug: DebugOpt = False,  # noqa: ARG001 (handled by its callback)
) -> None:
    """Entry point of the GitHub Action (reads INPUT_*, GITHUB_*)."""
    from evalkit.action.gate_runner import pipeline_gate
    from evalkit.action.run import run_action

    raise typer.Exit(run_action(os.environ, pipeline_gate))


def comment(
    from_dir: Annotated[
        Path, typer.Option("--from", help="The report bundle a fork's gate run uploaded.")
    ],
    debug: DebugOpt = False,  # noqa: ARG001 (handled by its callback)
) -> None:
    """Post a fork PR's report as the sticky comment.

    The workflow_run companion of a gate run on a fork's pull request.
    """
    from evalkit.action.run import post_comment_from_dir

    raise typer.Exit(post_comment_from_dir(from_dir, os.environ))
