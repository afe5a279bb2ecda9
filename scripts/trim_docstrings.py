"""Cut long internal docstrings to their first paragraph; the rest goes to a design page.

    uv run python scripts/trim_docstrings.py src/evalkit/some/module.py ...          # dry run
    uv run python scripts/trim_docstrings.py --write src/evalkit/some/module.py ...

A docstring is cut when it spans more than four lines and has a blank line after its
summary: the summary paragraph stays, the later paragraphs are appended, under the module
and the qualified name, to docs/design/code-notes.md, so no reasoning is lost. The public
API keeps its whole docstrings: every object a public face exports (``evalkit.__all__``,
``evalkit.metrics.__all__``, ...) and the public methods of exported classes. Leave out the
CLI command modules: Typer shows their docstrings as ``--help``. Run ``ruff format`` after.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import textwrap
from pathlib import Path

FACES = (
    "evalkit",
    "evalkit.metrics",
    "evalkit.targets",
    "evalkit.stats",
    "evalkit.report",
    "evalkit.goldens",
    "evalkit.registry",
    "evalkit.trec",
    "evalkit.compare",
    "evalkit.execute",
    "evalkit.export",
    "evalkit.results",
    "evalkit.runner",
    "evalkit.corpus",
    "evalkit.checks",
    "evalkit.significance",
    "evalkit.golden_loaders",
    "evalkit.errors",
)
NOTES = Path("docs/design/code-notes.md")
KEEP_UP_TO_LINES = 4


def public_objects() -> set[str]:
    """``module:qualname`` of every object a public face exports."""
    found = set()
    for face in FACES:
        module = importlib.import_module(face)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            where, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
            if isinstance(where, str) and isinstance(qual, str) and where.startswith("evalkit"):
                found.add(f"{where}:{qual}")
    return found


def module_name(path: Path) -> str:
    parts = list(path.with_suffix("").parts)
    parts = parts[parts.index("evalkit") :]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def docstring_nodes(tree: ast.Module, module: str, public: set[str]) -> list[tuple[str, ast.Expr]]:
    """(qualified name, docstring) of the module and every class and function not public."""
    out: list[tuple[str, ast.Expr]] = []

    def doc_of(node: ast.AST) -> ast.Expr | None:
        body = getattr(node, "body", None)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            return body[0] if isinstance(body[0].value.value, str) else None
        return None

    def visit(node: ast.AST, qual: str, in_public_class: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{qual}.{child.name}" if qual else child.name
                is_public = f"{module}:{name}" in public or (
                    in_public_class and not child.name.startswith("_")
                )
                doc = doc_of(child)
                if doc is not None and not is_public:
                    out.append((name, doc))
                visit(child, name, is_public and isinstance(child, ast.ClassDef))

    doc = doc_of(tree)
    if doc is not None:
        out.append(("", doc))
    visit(tree, "", False)
    return out


def trim(path: Path, public: set[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """The file's new lines and the (qualified name, text) cut from it."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    module = module_name(path)
    cuts: list[tuple[int, int, list[str], str, str]] = []
    for qual, doc in docstring_nodes(ast.parse("".join(lines)), module, public):
        start, end = doc.lineno - 1, doc.end_lineno or doc.lineno
        if end - start <= KEEP_UP_TO_LINES:
            continue
        seg = lines[start:end]
        blank = next((i for i in range(1, len(seg) - 1) if not seg[i].strip()), None)
        quote = '"""' if '"""' in seg[-1] else "'''"
        if blank is None or quote not in seg[-1]:
            continue
        first = seg[:blank]
        if len(first) == 1:
            new = [first[0].rstrip() + quote + "\n"]
        elif seg[-1].strip() == quote:
            new = [*first, seg[-1]]
        else:
            new = [*first[:-1], first[-1].rstrip() + quote + "\n"]
        rest = "".join(seg[blank + 1 :]).rstrip().removesuffix(quote)
        cuts.append((start, end, new, qual, textwrap.dedent(rest).strip()))
    notes = []
    for start, end, new, qual, rest in sorted(cuts, reverse=True):
        lines[start:end] = new
        notes.append((qual, rest))
    return lines, notes[::-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--write", action="store_true", help="rewrite the files and the notes")
    args = parser.parse_args()
    public = public_objects()
    saved = 0
    sections = []
    for path in args.paths:
        before = len(path.read_text(encoding="utf-8").splitlines())
        lines, notes = trim(path, public)
        saved += before - len(lines)
        if args.write and notes:
            path.write_text("".join(lines), encoding="utf-8")
            body = [f"## `{module_name(path)}`\n\n`{path}`\n"]
            for qual, text in notes:
                if text:
                    body.append(f"### `{qual}`\n\n{text}\n" if qual else f"{text}\n")
            sections.append("\n".join(body))
    if sections:
        with NOTES.open("a", encoding="utf-8") as out:
            out.write("\n" + "\n".join(sections))
    print(f"{saved} lines {'cut' if args.write else 'would be cut'}")


if __name__ == "__main__":
    main()
