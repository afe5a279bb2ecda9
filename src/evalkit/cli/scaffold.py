"""``evalkit init``: start a project (config, checks, goldens, a target stub, the workflow)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalkit.cli.common import DebugOpt, say


def init(
    folder: Annotated[
        Path,
        typer.Argument(metavar="FOLDER", help="Where to write the project (created if missing)."),
    ] = Path("."),
    debug: DebugOpt = False,  # noqa: ARG001 (handled by its callback)
) -> None:
    """Start a project: config, checks, goldens, target stub, workflow.

    Never overwrites: if any of the files exists, nothing is written.  The first
    `evalkit gate` passes; then replace the stub's search with a call to yours.
    """
    import shlex

    from evalkit._app.scaffold import scaffold

    written = scaffold(folder)
    say(f"wrote {', '.join(written)} in {folder}")
    go = "" if folder == Path(".") else f"cd {shlex.quote(str(folder))} && "
    files = " ".join(written)
    say("next:")
    say(f"  {go}evalkit gate")
    say("      runs evalkit_target.py over goldens.jsonl and decides checks.yaml (no baseline")
    say("      yet: the vs_baseline check says so and does not block)")
    say(f'  git add {files} && git commit -m "Add evalkit" && git push')
    say("      on the default branch the workflow promotes the baseline; every pull request")
    say("      is then gated against it")
