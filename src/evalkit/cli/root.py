"""The Typer app: the root options (``--version``, ``--debug``) and the command tree.

Every command module is imported here, and each imports only typer and
:mod:`evalkit.cli.common` at its top, so drawing ``evalkit --help`` loads the command
tree and nothing a command needs to run (tests/test_import_cost.py).
"""

from __future__ import annotations

from typing import Annotated

import typer

from evalkit.cli import action, baselines, gate, inspect, power, run, trec
from evalkit.cli.common import DEBUG_HELP, Command, enable_debug
from evalkit.exit_codes import ExitCode

app = typer.Typer(
    name="evalkit",
    help="Per-case evals with paired significance: run, compare, and gate changes.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _print_version(value: bool) -> None:
    if value:
        from evalkit._version import __version__

        typer.echo(f"evalkit {__version__}")
        raise typer.Exit(ExitCode.OK)


@app.callback()
def _root(
    debug: Annotated[
        bool, typer.Option("--debug", callback=enable_debug, help=DEBUG_HELP + ".")
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Print the evalkit version and exit.",
        ),
    ] = False,
) -> None:
    """Per-case evals with paired significance: run, compare, and gate changes."""


# In the order `evalkit --help` lists them: the run, the decision, the baseline, reading runs.
for _command in (
    run.run,
    run.merge,
    trec.score,
    gate.gate,
    baselines.promote,
    baselines.history,
    baselines.pin,
    inspect.compare,
    inspect.show,
    power.power,
    inspect.export,
    action.action,
    action.comment,
):
    app.command(cls=Command)(_command)
