"""Nothing a user can type is undocumented: every ``evalkit.yaml`` key, checks-file key,
command and option has its place in the reference pages.

The keys are read from the pydantic models of ``evalkit.yaml`` (recursively) and the checks
file's key tables, the commands and options from the Typer app, so a key or a command added
later fails here until docs/ describes it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from typing import Any, get_args

import typer.main
from pydantic import BaseModel

from evalkit._spec.checks import CHECK_KEYS, FILE_KEYS
from evalkit._spec.config import EvalkitConfig
from evalkit.cli import app
from helpers.markdown import DOCS, blocks, read, section

CONFIG = read(DOCS / "config.md")
CHECKS = read(DOCS / "checks.md")
CLI = read(DOCS / "cli.md")
# Typer vendors its own click, so the command tree is read by shape, not class.
ROOT: Any = typer.main.get_command(app)


def config_keys(model: type[BaseModel], prefix: str = "") -> Iterator[str]:
    """Every key path of a config model: ``target.http.url``, ``judge[].model``."""
    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        yield path
        annotation = field.annotation
        nested = [
            arg
            for arg in (annotation, *get_args(annotation))
            for arg in (arg, *get_args(arg))
            if isinstance(arg, type) and issubclass(arg, BaseModel)
        ]
        for sub in dict.fromkeys(nested):
            is_list = "list" in str(annotation)
            yield from config_keys(sub, f"{path}[]." if is_list else f"{path}.")


def table_keys(text: str) -> set[str]:
    """The keys of a reference table's rows: ``| `a` |`` and ``| `a` / `b` |``."""
    rows = re.findall(r"^\| `([^`]+)`(?: / `([^`]+)`)? \|", text, re.M)
    return {key for pair in rows for key in pair if key}


def undocumented_config_keys(model: type[BaseModel], page: str) -> list[str]:
    documented = table_keys(section(page, "Every `evalkit.yaml` key"))
    # A block (target, baseline) is documented through its keys.
    return [
        key
        for key in config_keys(model)
        if key not in documented and not any(d.startswith(key + ".") for d in documented)
    ]


def options(command: Any) -> list[str]:
    """The options a user sees in ``--help`` (the secondary ``--no-x`` forms included)."""
    return [
        flag
        for param in command.params
        if param.param_type_name == "option" and not param.hidden
        for flag in (*param.opts, *param.secondary_opts)
    ]


def command_section(name: str) -> str:
    heading = next(
        h for h in re.findall(r"^## (`evalkit [^\n]+)$", CLI, re.M) if f"`evalkit {name}`" in h
    )
    return section(CLI, heading)


def undocumented_options(text: str, command: Any) -> list[str]:
    """The options of ``command`` that ``text`` never names (``--case`` is not ``--case-x``)."""
    return [
        flag
        for flag in options(command)
        if not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text)
    ]


# --- evalkit.yaml ---------------------------------------------------------------------


def test_the_key_walk_reaches_every_level() -> None:
    keys = list(config_keys(EvalkitConfig))
    assert len(keys) > 30
    for deep in ("target.http.timeout_s", "judge[].model", "baseline.keep_promotions"):
        assert deep in keys


def test_every_config_key_has_a_row() -> None:
    assert undocumented_config_keys(EvalkitConfig, CONFIG) == []


def test_an_undocumented_config_key_is_found() -> None:
    class Extra(BaseModel):
        depth: int = 1

    class Config(BaseModel):
        goldens: str
        extra: Extra

    page = "## Every `evalkit.yaml` key\n\n| key | meaning |\n|---|---|\n| `goldens` | x |\n"
    assert undocumented_config_keys(Config, page) == ["extra", "extra.depth"]


# --- the checks file --------------------------------------------------------------------


def test_every_checks_file_key_has_a_row() -> None:
    documented = table_keys(section(CHECKS, "Every key"))
    assert [key for key in (*FILE_KEYS, *CHECK_KEYS) if key not in documented] == []
    assert len(FILE_KEYS) + len(CHECK_KEYS) > 15


# --- the command line -------------------------------------------------------------------


def test_every_command_has_a_section_listing_its_options() -> None:
    assert len(ROOT.commands) >= 13
    missing = {}
    for name in ROOT.commands:
        command = ROOT.commands[name]
        if undocumented := undocumented_options(command_section(name), command):
            missing[name] = undocumented
    assert missing == {}


def test_an_undocumented_option_is_found() -> None:
    gate = ROOT.commands["gate"]
    assert "--debug" not in options(gate)  # hidden: the root's option, documented once
    text = command_section("gate").replace("`--case ID`", "`--case-x ID`")
    assert undocumented_options(text, gate) == ["--case"]


def test_the_root_options_are_documented() -> None:
    for flag in (f for p in ROOT.params for f in p.opts):
        assert f"`{flag}`" in CLI, flag


def examples() -> list[list[str]]:
    (block, *_) = blocks(CLI, "bash")
    lines = [line.split("  #")[0].strip() for line in block.splitlines()]
    return [shlex.split(line) for line in lines if line.startswith("evalkit ")]


def test_every_command_has_an_example_and_a_row() -> None:
    shown = {words[1] for words in examples()}
    assert shown == set(ROOT.commands), set(ROOT.commands) ^ shown
    for name in ROOT.commands:
        assert re.search(rf"^\| \[`evalkit {name}`\]", CLI, re.M) or re.search(
            rf", \[`evalkit {name}`\]", CLI
        ), name


def test_every_option_in_the_examples_exists() -> None:
    for words in examples():
        command = ROOT.commands[words[1]]
        flags = {f for p in command.params for f in (*p.opts, *p.secondary_opts)}
        for word in words[2:]:
            if word.startswith("-") and word != "-":
                assert word.split("=")[0] in flags, (words, word)
