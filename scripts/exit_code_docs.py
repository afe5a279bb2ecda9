"""Write the exit-code table of ``evalkit.exit_codes`` into the docs that show it.

    uv run python scripts/exit_code_docs.py          # rewrite docs/cli.md and docs/action.md
    uv run python scripts/exit_code_docs.py --check  # exit 1 if either is out of date

The table sits between ``<!-- exit-codes -->`` (or ``<!-- exit-codes action -->``, the
Action's codes only) and ``<!-- /exit-codes -->``; ``tests/api/test_exit_codes.py`` runs the
check, so the copies cannot drift from the code.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from evalkit.exit_codes import ACTION_CODES, ExitCode, markdown_table

ROOT = Path(__file__).resolve().parent.parent
DOCS = (ROOT / "docs" / "cli.md", ROOT / "docs" / "action.md")
_BLOCK = re.compile(r"(<!-- exit-codes( action)? -->\n)(.*?)(<!-- /exit-codes -->)", re.S)


def render(text: str) -> str:
    """``text`` with every marked block holding the current table."""

    def fill(match: re.Match[str]) -> str:
        codes = ACTION_CODES if match.group(2) else tuple(ExitCode)
        return f"{match.group(1)}{markdown_table(codes)}{match.group(4)}"

    return _BLOCK.sub(fill, text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only report stale copies")
    args = parser.parse_args()
    stale = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        if not _BLOCK.search(text):
            print(f"{doc.relative_to(ROOT)}: no <!-- exit-codes --> block", file=sys.stderr)
            return 1
        fresh = render(text)
        if fresh != text:
            stale.append(doc)
            if not args.check:
                doc.write_text(fresh, encoding="utf-8")
    if args.check and stale:
        names = ", ".join(str(d.relative_to(ROOT)) for d in stale)
        fix = "uv run python scripts/exit_code_docs.py"
        print(f"{names}: the exit-code table is out of date; run {fix}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
