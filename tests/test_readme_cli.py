"""README's "The command line" section shows every command, with options that exist.

The commands and their options are read from the app, so a command added later
fails here until the README shows it.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import typer.main

from evalkit.cli import app

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
# Typer vendors its own click, so the command tree is read by shape, not class.
ROOT: Any = typer.main.get_command(app)


def section() -> str:
    start = README.index("## The command line\n")
    end = README.index("\n## ", start + 1)
    return README[start:end]


def examples() -> list[list[str]]:
    (block,) = re.findall(r"```bash\n(.*?)```", section(), re.S)[:1]
    lines = [line.split("  #")[0].strip() for line in block.splitlines()]
    return [shlex.split(line) for line in lines if line.startswith("evalkit ")]


def flags(command: Any) -> set[str]:
    return {f for p in command.params for f in (*p.opts, *getattr(p, "secondary_opts", ()))}


def test_every_command_has_an_example_and_a_row() -> None:
    shown = {words[1] for words in examples()}
    assert shown == set(ROOT.commands), set(ROOT.commands) ^ shown
    text = section()
    for name in ROOT.commands:
        # a table row: `evalkit NAME …` in code, at the start of a row or after another
        assert re.search(rf"(\| |, )`evalkit {name}[ `]", text), name


def test_every_option_in_the_examples_exists() -> None:
    for words in examples():
        command = ROOT.commands[words[1]]
        for word in words[2:]:
            if word.startswith("-") and word != "-":
                assert word.split("=")[0] in flags(command), (words, word)
