"""One table of exit codes: every evalkit error carries its own, and the gate uses the same."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from evalkit import ExitCode, errors
from evalkit.errors import EvalkitError, InputError, RuntimeFailure
from evalkit.exit_codes import ACTION_CODES, MEANINGS
from helpers.scripts import load_script

ERROR_CLASSES = [
    cls
    for _, cls in inspect.getmembers(errors, inspect.isclass)
    if issubclass(cls, EvalkitError) and cls.__module__ == errors.__name__
]


def test_the_codes_scripts_branch_on_never_change() -> None:
    assert [(c.name, int(c)) for c in ExitCode] == [
        ("OK", 0),
        ("CHECK_FAILED", 1),
        ("INPUT", 2),
        ("RUNTIME", 3),
        ("INCOMPLETE", 4),
        ("INTERRUPTED", 130),
        ("TERMINATED", 143),
    ]


@pytest.mark.parametrize("cls", ERROR_CLASSES, ids=lambda c: c.__name__)
def test_every_error_class_carries_the_code_of_its_kind(cls: type[EvalkitError]) -> None:
    kinds = [base for base in cls.__mro__ if base in (InputError, RuntimeFailure)]
    if not kinds:  # the root
        assert cls is EvalkitError
        assert cls.exit_code is ExitCode.RUNTIME
        return
    # A class that is both (e.g. a judge's bad config) takes the kind it names first.
    expected = ExitCode.INPUT if kinds[0] is InputError else ExitCode.RUNTIME
    assert cls.exit_code is expected


def test_the_github_errors_are_runtime_failures() -> None:
    from evalkit.github.client import GitHubApiError

    assert GitHubApiError.exit_code is ExitCode.RUNTIME


# --- the table is written once: every copy users read is generated from it -------------

_ROOT = Path(__file__).resolve().parents[2]


def _doc_script() -> ModuleType:
    return load_script("scripts/exit_code_docs.py")


def test_every_code_has_one_meaning() -> None:
    assert set(MEANINGS) == set(ExitCode)
    # The Action gates no -k subset, but a pull request's stop_early: budget can run out
    # before every check settled: incomplete, exit 4, as `evalkit gate` (docs/action.md).
    assert ExitCode.INCOMPLETE in ACTION_CODES


@pytest.mark.parametrize("doc", ["docs/cli.md", "docs/action.md"])
def test_the_docs_tables_are_generated_from_the_code(doc: str) -> None:
    script = _doc_script()
    text = (_ROOT / doc).read_text(encoding="utf-8")
    assert "<!-- exit-codes" in text
    assert script.render(text) == text, "run: uv run python scripts/exit_code_docs.py"


def test_a_stale_table_is_rewritten() -> None:
    script = _doc_script()
    stale = "a\n<!-- exit-codes action -->\n| `0` | old |\n<!-- /exit-codes -->\nb\n"
    fresh = script.render(stale)
    assert "| `0` | old |" not in fresh
    for code in ACTION_CODES:
        assert f"| `{int(code)}` | `{code.name}` | {MEANINGS[code]} |" in fresh
    rows = [line for line in fresh.splitlines() if line.startswith("| `")]
    assert len(rows) == len(ACTION_CODES)  # one row per code, nothing else


def test_the_action_output_names_every_code_the_action_ends_with() -> None:
    action = yaml.safe_load((_ROOT / "action.yml").read_text(encoding="utf-8"))
    described = action["outputs"]["exit-code"]["description"]
    for code in ACTION_CODES:
        assert re.search(rf"\b{int(code)}\b", described), (code, described)


def test_the_module_docstrings_point_at_the_table_instead_of_copying_it() -> None:
    from evalkit.action import run as action
    from evalkit.cli import session as cli

    for module in (cli, action):
        doc = module.__doc__ or ""
        assert "evalkit.exit_codes" in doc
        assert "130" not in doc
        assert "143" not in doc
