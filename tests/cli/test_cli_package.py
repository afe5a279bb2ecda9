"""The command line is a shell: one module per command group, each command short and
handing its work to one use case in :mod:`evalkit._app` (issue 22).

Read from the source (the AST of every module of ``evalkit.cli``), so a command added
later is held to the same rules without touching this file.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import evalkit.cli

CLI = Path(evalkit.cli.__file__).parent
MODULES = sorted(CLI.glob("*.py"))
LONGEST = 80  # lines, from `def` to the function's last line

# Modules that run, resume, pair, score, decide or fetch: the use cases use them, the
# command line never does (it parses options, calls a use case, and prints).
RUN_MODULES = {
    "evalkit._engine",
    "evalkit._spec.artifact",
    "evalkit._spec.export",
    "evalkit._spec.trec",
    "evalkit._store",
    "evalkit.gate.compare",
    "evalkit.gate.inputs",
    "evalkit.gate.procedure",
    "evalkit.gate.reference",
    "evalkit.github",
    "evalkit.stats",
}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _runtime_imports(tree: ast.Module) -> set[str]:
    # names imported for annotations only (under `if TYPE_CHECKING:`) run nothing
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"
        for inner in ast.walk(node)
    }
    runtime = [node for node in ast.walk(tree) if id(node) not in typing_only]
    return {
        node.module
        for node in runtime
        if isinstance(node, ast.ImportFrom) and node.module is not None
    } | {alias.name for node in runtime if isinstance(node, ast.Import) for alias in node.names}


def test_the_cli_is_a_package_of_several_modules() -> None:
    names = {path.stem for path in MODULES}
    assert {"common", "root", "session", "run", "trec", "gate"} <= names
    assert "commands" not in names  # the 1,250-line module it replaced


def _long_functions(tree: ast.Module) -> set[str]:
    return {
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > LONGEST
    }


def _run_logic(tree: ast.Module) -> set[str]:
    imported = _runtime_imports(tree)
    return {m for m in imported if any(m == r or m.startswith(r + ".") for r in RUN_MODULES)}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_no_cli_function_is_longer_than_80_lines(path: Path) -> None:
    long = _long_functions(_tree(path))
    assert not long, f"{path.name}: split {sorted(long)} (at most {LONGEST} lines)"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_no_cli_module_imports_run_logic(path: Path) -> None:
    leaks = _run_logic(_tree(path))
    assert not leaks, f"{path.name} imports {sorted(leaks)}: call a use case in evalkit._app"


def test_the_rules_above_catch_what_they_are_for(tmp_path: Path) -> None:
    # A command of 81 lines that scores a file itself breaks both rules; at 80 lines and
    # with the import only for annotations, neither.
    def command(lines: int, guarded: bool) -> ast.Module:
        head = "from typing import TYPE_CHECKING\n"
        head += "if TYPE_CHECKING:\n    from evalkit._spec.trec import score_trec\n"
        if not guarded:
            head += "from evalkit._spec.trec import score_trec\n"
        body = "\n".join(f"    x{i} = {i}" for i in range(lines - 1))
        return ast.parse(f"{head}def cmd() -> None:\n{body}\n")

    assert _long_functions(command(81, guarded=False)) == {"cmd (81 lines)"}
    assert _run_logic(command(81, guarded=False)) == {"evalkit._spec.trec"}
    assert _long_functions(command(80, guarded=True)) == set()
    assert _run_logic(command(80, guarded=True)) == set()


def _command_source(module: str, name: str) -> str:
    path = CLI / f"{module}.py"
    text = path.read_text(encoding="utf-8")
    node = next(n for n in _tree(path).body if isinstance(n, ast.FunctionDef) and n.name == name)
    source = ast.get_source_segment(text, node)
    assert source is not None
    return source


def test_the_gate_command_hands_its_whole_decision_to_the_pipeline() -> None:
    source = _command_source("gate", "gate")
    assert "gate_config(" in source
    assert "find_baseline" not in source


@pytest.mark.parametrize(
    ("module", "name", "use_case"),
    [
        ("run", "merge", "merge_shard_files("),
        ("trec", "_score", "score_trec_file("),
        ("inspect", "compare", "compare_files("),
        ("inspect", "show", "show_run("),
        ("inspect", "export", "export_csv("),
        ("inspect", "power", "power_of_files("),
        ("run", "_run_and_report", "run_config("),
    ],
)
def test_each_command_calls_its_use_case(module: str, name: str, use_case: str) -> None:
    assert use_case in _command_source(module, name)
