"""The shape issue 22 gave the package, kept by reading the source (no import needed).

* The loaded config travels only in the use cases and the entry points: below them
  (stores, GitHub adapters, reporters, the gate) code takes plain values, so a store
  cannot come to depend on a setting that is not its own.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "evalkit"

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
