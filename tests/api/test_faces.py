"""The package's top level: faces for users, entry points and leaves, nothing else (issue 22).

A face keeps a public import path (0.2.0's, the README's) working while the code lives
in a layer package; it only re-exports, so it can never drift from its owner.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import evalkit

PACKAGE = Path(evalkit.__file__).parent
FACES = sorted(
    [
        "checks",
        "compare",
        "corpus",
        "execute",
        "export",
        "golden_loaders",
        "goldens",
        "registry",
        "results",
        "runner",
        "significance",
        "trec",
    ]
)
LEAVES = {"__init__", "__main__", "_version", "errors", "exit_codes"}


def _top_level_modules() -> set[str]:
    return {m.name for m in pkgutil.iter_modules([str(PACKAGE)]) if not m.ispkg} | {"__init__"}


def test_the_top_level_holds_only_faces_entry_points_and_leaves() -> None:
    modules = _top_level_modules()
    assert modules - LEAVES - set(FACES) == set(), "place new modules in a layer package"
    assert len(modules) <= 18


@pytest.mark.parametrize("face", FACES)
def test_a_face_only_re_exports(face: str) -> None:
    tree = ast.parse((PACKAGE / f"{face}.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, ast.ImportFrom):
            continue
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [
            "__all__"
        ]:
            continue
        # 0.2.0's `evalkit.compare(...)` was a function: that face stays callable.
        if face == "compare" and isinstance(node, ast.Expr):
            continue
        pytest.fail(f"{face}.py line {node.lineno}: a face holds only imports and __all__")


@pytest.mark.parametrize("face", FACES)
def test_every_name_a_face_exports_is_its_owners_object(face: str) -> None:
    module = importlib.import_module(f"evalkit.{face}")
    assert module.__all__ == sorted(module.__all__)
    tree = ast.parse((PACKAGE / f"{face}.py").read_text(encoding="utf-8"))
    owners = {
        alias.asname or alias.name: node.module
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module != "__future__"
        for alias in node.names
    }
    for name in module.__all__:
        owner = owners[name]
        assert owner is not None
        assert not owner.startswith(f"evalkit.{face}")
        assert getattr(importlib.import_module(owner), name) is getattr(module, name), name


def test_the_callable_face_still_calls() -> None:
    import evalkit.compare as compare_module

    assert compare_module(0.7, ">=", 0.6) is True  # type: ignore[operator]
