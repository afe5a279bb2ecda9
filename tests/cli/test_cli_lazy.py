"""The root group converts a command only when it is looked up (evalkit.cli.root).

What a user sees must not depend on it: the lazy tree's help, its commands and its
errors are held equal to a tree Typer converts whole, the way it did before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer
import typer.main

from evalkit.cli import app, main
from evalkit.cli.common import Command
from evalkit.cli.root import COMMAND_FUNCTIONS, _root, command_name


def _eager_root() -> Any:
    """The same app converted whole by Typer itself: the reference."""
    eager = typer.Typer(
        name="evalkit",
        help="Per-case evals with paired significance: run, compare, and gate changes.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )
    eager.callback()(_root)
    for function in COMMAND_FUNCTIONS:
        eager.command(cls=Command)(function)
    return typer.main.get_command(eager)


def _help(group: Any, *path: str, width: int = 80) -> str:
    command = group
    ctx = command.make_context("evalkit", [], resilient_parsing=True, terminal_width=width)
    for name in path:
        command = command.commands[name]
        ctx = command.make_context(name, [], parent=ctx, resilient_parsing=True)
    return str(command.get_help(ctx))


@pytest.mark.parametrize("width", [60, 80, 120])
def test_the_root_help_is_the_one_typer_draws_from_the_whole_tree(width: int) -> None:
    assert _help(typer.main.get_command(app), width=width) == _help(_eager_root(), width=width)


@pytest.mark.parametrize("function", COMMAND_FUNCTIONS, ids=command_name)
def test_every_command_converts_to_what_typer_makes_of_it(function: Any) -> None:
    name = command_name(function)
    lazy: Any = typer.main.get_command(app)
    eager = _eager_root()
    assert list(lazy.commands) == list(eager.commands)
    assert _help(lazy, name) == _help(eager, name)
    mine, theirs = lazy.commands[name], eager.commands[name]
    shape = [(p.opts, p.default, p.required, p.multiple, p.nargs) for p in theirs.params]
    assert [(p.opts, p.default, p.required, p.multiple, p.nargs) for p in mine.params] == shape


def test_help_converts_no_command_and_a_command_converts_only_itself(
    capsys: pytest.CaptureFixture[str],
) -> None:
    root: Any = typer.main.get_command(app)
    root.main(["--help"], prog_name="evalkit", standalone_mode=False)
    assert root.commands.converted() == []
    root.main(["gate", "--help"], prog_name="evalkit", standalone_mode=False)
    assert root.commands.converted() == ["gate"]
    assert "Usage: evalkit gate" in capsys.readouterr().out


def test_a_mistyped_command_is_still_answered_with_the_nearest_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["gatee"]) == 2
    error = capsys.readouterr().err
    assert "No such command 'gatee'" in error
    assert "Did you mean 'gate'?" in error
