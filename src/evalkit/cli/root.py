"""The Typer app: the root options (``--version``, ``--debug``) and the command tree.

Each command module imports only typer and :mod:`evalkit.cli.common` at its top, and a
command is converted to click only when it is looked up (docs/design/code-notes.md).
"""

from __future__ import annotations

import inspect as pyinspect
from collections.abc import Callable, Iterator, MutableMapping
from typing import Annotated, Any

import typer
import typer.core
import typer.main

from evalkit.cli import action, baselines, gate, inspect, run, scaffold, trec
from evalkit.cli.common import DEBUG_HELP, Command, enable_debug
from evalkit.exit_codes import ExitCode

# In the order `evalkit --help` lists them: starting, the run, the decision, the baseline,
# reading runs.
COMMAND_FUNCTIONS: tuple[Callable[..., Any], ...] = (
    scaffold.init,
    run.run,
    run.merge,
    trec.score,
    gate.gate,
    baselines.promote,
    baselines.history,
    baselines.pin,
    inspect.compare,
    inspect.show,
    inspect.power,
    inspect.export,
    action.action,
    action.comment,
)


def command_name(function: Callable[..., Any]) -> str:
    """The name a command is typed as: Typer's rule (``show_run`` -> ``show-run``)."""
    return function.__name__.lower().replace("_", "-")


def convert(function: Callable[..., Any]) -> Any:
    """The click command Typer makes of ``function``, with the root's settings."""
    one = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
    one.command(cls=Command)(function)
    return typer.main.get_command(one)


class _CommandTable(MutableMapping[str, Any]):
    """The root's commands by name, each converted on first lookup and kept.

    Its keys are known without converting anything, so listing the names (and
    click's "did you mean" for a typo) costs nothing.
    """

    def __init__(self, functions: tuple[Callable[..., Any], ...]) -> None:
        self._functions = {command_name(f): f for f in functions}
        self._converted: dict[str, Any] = {}

    def function(self, name: str) -> Callable[..., Any]:
        return self._functions[name]

    def converted(self) -> list[str]:
        """The names converted so far (what a lookup has cost)."""
        return list(self._converted)

    def __getitem__(self, name: str) -> Any:
        if name not in self._converted:
            self._converted[name] = convert(self._functions[name])
        return self._converted[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._functions.setdefault(name, command.callback)
        self._converted[name] = command

    def __delitem__(self, name: str) -> None:
        del self._functions[name]
        self._converted.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._functions)

    def __len__(self) -> int:
        return len(self._functions)


class LazyRoot(typer.core.TyperGroup):
    """The ``evalkit`` group, whose commands are converted only when one is looked up."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _CommandTable(COMMAND_FUNCTIONS)

    def list_commands(self, ctx: Any) -> list[str]:  # noqa: ARG002 (click's signature)
        # The names in their listing order, without converting a command.
        return list(self.commands)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        # The listing needs each command's summary alone, and a bare command carrying the
        # docstring gives the same line as the converted one (the limit is TyperGroup's).
        table = self.commands
        assert isinstance(table, _CommandTable)
        summaries = [
            (name, typer.core.TyperCommand(name=name, help=pyinspect.getdoc(table.function(name))))
            for name in self.list_commands(ctx)
        ]
        if not summaries:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in summaries)
        with formatter.section("Commands"):
            formatter.write_dl([(name, bare.get_short_help_str(limit)) for name, bare in summaries])


app = typer.Typer(
    name="evalkit",
    cls=LazyRoot,
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
