"""What a metric's code *does*, as a stable string: the basis of its definition fingerprint."""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import textwrap
import types
from collections.abc import Callable
from typing import Any

# Bumped if the serialisation below ever changes: old fingerprints then differ on purpose.
SCHEME = "ast-1"

_SCALARS = (bool, int, float, complex, str, bytes, type(None), type(Ellipsis))
_MAX_ITEMS = 1_000
_MAX_DEPTH = 4
# Fields that record spelling, not behaviour: `u"x"` vs `"x"`, `# type:` comments.
_IGNORED_FIELDS = frozenset({"kind", "type_comment"})


def code_hash(fn: Callable[..., Any]) -> str:
    """A SHA-256 that changes when what ``fn`` computes changes, and not for comments."""
    return hashlib.sha256(_identity(fn, set()).encode("utf-8")).hexdigest()


def _identity(fn: Any, seen: set[int]) -> str:
    seen.add(id(fn))
    func = fn.__func__ if inspect.ismethod(fn) else fn
    if isinstance(func, types.FunctionType):
        tree = _tree(func)
        if tree is None:
            return source_or_name(func)
        deps = _function_dependencies(func, tree, seen)
        return json.dumps({"ast": _canonical(tree), "uses": deps}, sort_keys=True)
    if inspect.isbuiltin(fn) or inspect.isclass(fn):
        return source_or_name(fn)
    cls = type(fn)
    tree = _tree(cls)
    if tree is None:
        return source_or_name(cls)
    found = getattr(fn, "__dict__", {})  # none for an object with __slots__ only
    attrs = {k: _value(found[k], seen, 0) for k in sorted(k for k in found if isinstance(k, str))}
    return json.dumps({"ast": _canonical(tree), "attrs": attrs}, sort_keys=True)


def source_or_name(target: Any) -> str:
    """``src:`` and the source text of ``target``, or ``qualname:`` and its name without one."""
    try:
        return "src:" + inspect.getsource(target)
    except (OSError, TypeError):
        module = getattr(target, "__module__", "?")
        qualname = getattr(target, "__qualname__", repr(target))
        return f"qualname:{module}.{qualname}"


def _tree(target: Any) -> ast.AST | None:
    """The definition's syntax tree (docstrings, own name and decorators removed)."""
    try:
        source = textwrap.dedent(inspect.getsource(target))
    except (OSError, TypeError):
        return None
    try:
        module = ast.parse(source)
    except SyntaxError:
        return None
    if len(module.body) != 1:
        return None
    node: ast.AST = module.body[0]
    if getattr(target, "__name__", "") == "<lambda>":
        lambdas = [n for n in ast.walk(module) if isinstance(n, ast.Lambda)]
        if len(lambdas) != 1:
            return None  # several lambdas on the lines: cannot tell which one is meant
        node = lambdas[0]
    for child in ast.walk(node):
        _drop_docstring(child)
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        node.decorator_list = []
        node.name = ""
    elif isinstance(node, ast.ClassDef):
        node.name = ""
    return node


def _drop_docstring(node: ast.AST) -> None:
    kinds = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module
    if isinstance(node, kinds) and ast.get_docstring(node, clean=False) is not None:
        node.body = node.body[1:] or [ast.Pass()]


def _canonical(node: Any) -> Any:
    """A JSON-able form of a tree that does not depend on the Python version's extra fields."""
    if isinstance(node, ast.AST):
        fields: list[Any] = []
        for name, value in ast.iter_fields(node):
            if name in _IGNORED_FIELDS:
                continue
            canon = _canonical(value)
            if canon is None or canon == []:
                continue
            fields.append([name, canon])
        return [type(node).__name__, fields]
    if isinstance(node, list):
        return [_canonical(item) for item in node]
    if isinstance(node, _SCALARS):
        return None if node is None else [type(node).__name__, repr(node)]
    return [type(node).__name__, repr(node)]


def _function_dependencies(fn: types.FunctionType, tree: ast.AST, seen: set[int]) -> Any:
    names = sorted(
        {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    )
    scope = getattr(fn, "__globals__", {})
    uses: dict[str, Any] = {}
    for name in names:
        if name in scope:
            uses[name] = _dependency(scope[name], fn, seen)
    cells = fn.__closure__ or ()
    for name, cell in zip(fn.__code__.co_freevars, cells, strict=False):
        try:
            contents = cell.cell_contents
        except ValueError:  # an empty cell: the name is not bound yet
            continue
        uses["closure:" + name] = _dependency(contents, fn, seen)
    return uses


def _dependency(value: Any, owner: types.FunctionType, seen: set[int]) -> Any:
    if inspect.isfunction(value) and value.__module__ == owner.__module__:
        if id(value) in seen:
            return ["function", value.__qualname__]  # recursion: named, not re-walked
        return ["function", _identity(value, seen)]
    return _value(value, seen, 0)


def _value(value: Any, seen: set[int], depth: int) -> Any:
    """Plain data by value; anything else by its kind and name."""
    if isinstance(value, _SCALARS):
        return [type(value).__name__, repr(value)]
    if depth < _MAX_DEPTH:
        if isinstance(value, list | tuple) and len(value) <= _MAX_ITEMS:
            return [type(value).__name__, [_value(v, seen, depth + 1) for v in value]]
        if isinstance(value, set | frozenset) and len(value) <= _MAX_ITEMS:
            items = sorted(json.dumps(_value(v, seen, depth + 1)) for v in value)
            return [type(value).__name__, items]
        if isinstance(value, dict) and len(value) <= _MAX_ITEMS:
            pairs = sorted(
                [json.dumps(_value(k, seen, depth + 1)), _value(v, seen, depth + 1)]
                for k, v in value.items()
            )
            return ["dict", pairs]
    if isinstance(value, types.ModuleType):
        return ["module", value.__name__]
    module = getattr(value, "__module__", None) or getattr(type(value), "__module__", "?")
    qualname = getattr(value, "__qualname__", None) or type(value).__qualname__
    return ["ref", f"{module}.{qualname}"]
