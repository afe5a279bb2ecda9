"""The shape issue 22 gave the package, kept by reading the source (no import needed).

* Entry points stay thin: no function in the Action's package is over 80 lines (a mode
  that grows splits into steps, as gate_mode does, instead of one long function).
* The loaded config travels only in the use cases and the entry points: below them
  (stores, GitHub adapters, reporters, the gate) code takes plain values, so a store
  cannot come to depend on a setting that is not its own.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "evalkit"

# Packages whose every function (methods and nested ones too) is at most MAX_LINES long.
SHORT_FUNCTIONS = ("action",)
MAX_LINES = 80

# Where LoadedConfig may appear: its owner, the use cases and the entry points.
CONFIG_TRAVELS = ("_spec/config.py", "_app/", "action/", "cli/")


def _names(tree: ast.AST) -> set[str]:
    found = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    found |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    found |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    return found  # names and imports only: a docstring may mention the config


def test_the_loaded_config_travels_only_in_the_use_cases_and_entry_points() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith(CONFIG_TRAVELS):
            continue
        if "LoadedConfig" in _names(ast.parse(path.read_text(encoding="utf-8"))):
            offenders.append(rel)
    assert offenders == [], f"take plain values (StoreSettings, paths) instead: {offenders}"


def _long_functions(package: Path) -> list[str]:
    """``file:line name (lines)`` of every function in ``package`` over MAX_LINES lines."""
    found = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_LINES:
                    found.append(f"{path.relative_to(package)}:{node.lineno} {node.name} ({lines})")
    return found


def test_the_line_count_sees_a_long_method_and_passes_an_80_line_function(
    tmp_path: Path,
) -> None:
    def source(name: str, lines: int, indent: str) -> str:
        body = "".join(f"{indent}    x{i} = {i}\n" for i in range(lines - 1))
        return f"{indent}def {name}():\n{body}"

    (tmp_path / "m.py").write_text(
        source("fits", MAX_LINES, "") + "class C:\n" + source("long", MAX_LINES + 1, "    ")
    )
    assert _long_functions(tmp_path) == [f"m.py:{MAX_LINES + 2} long ({MAX_LINES + 1})"]


def test_no_function_in_the_entry_points_is_over_80_lines() -> None:
    for package in SHORT_FUNCTIONS:
        assert (SRC / package).is_dir(), package
        assert _long_functions(SRC / package) == [], f"split into steps: {package}"
