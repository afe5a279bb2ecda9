"""Every command's ``--help`` as an 80-column terminal shows it (in process, through ``main``).

The commands are read from the app itself, so a command added later is held to
the same rule without touching this file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer.main

from evalkit.cli import app
from helpers.cli import evalkit

# Typer vendors its own click, so the command tree is read by shape, not class.
ROOT: Any = typer.main.get_command(app)
COMMANDS = sorted(ROOT.commands)


def _help(tmp_path: Path, *command: str) -> list[str]:
    result = evalkit(*command, "--help", cwd=tmp_path, env={"COLUMNS": "80"})
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    too_wide = [line for line in lines if len(line) > 80]
    assert not too_wide, too_wide
    # rich's table cells cut long option names to "--judge-cache-o…"; plain help never cuts
    assert "…" not in "".join(line for line in lines if line.lstrip().startswith("-"))
    return lines


def test_the_root_help_lists_every_command_with_its_whole_summary(tmp_path: Path) -> None:
    lines = _help(tmp_path)
    listing = lines[lines.index("Commands:") + 1 :]
    assert sorted(line.split()[0] for line in listing if line.startswith("  ")) == COMMANDS
    for line in listing:
        # click cuts a summary that does not fit with "..."; each must fit whole
        assert not line.rstrip().endswith("..."), line
    assert any("--version" in line for line in lines)


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_help_fits_80_columns_and_names_every_option(
    tmp_path: Path, name: str
) -> None:
    text = "\n".join(_help(tmp_path, name))
    command = ROOT.commands[name]
    assert text.startswith(f"Usage: evalkit {name} ")
    for param in command.params:
        if param.param_type_name == "option" and not param.hidden:
            for flag in [*param.opts, *param.secondary_opts]:
                assert flag in text, (name, flag)
            assert param.help, f"{name} {param.opts[0]} has no help text"
    # box-drawing characters mean the rich layout, whose 80-column form is unreadable
    assert "│" not in text


@pytest.mark.parametrize("name", COMMANDS)
def test_no_on_off_flag_shows_its_off_default(tmp_path: Path, name: str) -> None:
    # An off switch is what "not given" means; saying "[default: no-require-reference]"
    # beside one flag and nothing beside its sibling reads as if they differed.
    text = " ".join(" ".join(_help(tmp_path, name)).split())
    assert "[default: no-" not in text
    assert "[default: False]" not in text


@pytest.mark.parametrize("name", COMMANDS)
def test_an_argument_reads_as_its_metavar_not_a_python_type(tmp_path: Path, name: str) -> None:
    lines = _help(tmp_path, name)
    command = ROOT.commands[name]
    for param in command.params:
        if param.param_type_name != "argument" or param.metavar is None:
            continue
        shown = param.metavar + ("..." if param.nargs != 1 else "")
        entry = [line for line in lines if line.split()[:1] == [shown]]
        assert entry, (name, shown, lines)
        assert "<" not in entry[0].split("  ")[1], entry  # no "<list[Path]>" beside it


def test_compare_help_names_its_runs_as_run_dots(tmp_path: Path) -> None:
    lines = _help(tmp_path, "compare")
    arguments = lines[lines.index("Arguments:") + 1]
    assert arguments.split()[0] == "RUN..."
    assert "list[Path]" not in "\n".join(lines)
