"""docs/design/README.md indexes every design note, and names owners that exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DESIGN = ROOT / "docs" / "design"
INDEX = (DESIGN / "README.md").read_text(encoding="utf-8")
ROWS = [line for line in INDEX.splitlines() if line.startswith("| [")]


def test_every_note_is_in_the_index() -> None:
    notes = {p.name for p in DESIGN.glob("*.md")} - {"README.md"}
    listed = {re.match(r"\| \[([^\]]+)\]", row).group(1) for row in ROWS}  # type: ignore[union-attr]
    assert listed == notes


def test_every_owner_named_exists() -> None:
    missing = []
    for row in ROWS:
        owners = row.rsplit("|", 2)[-2]
        for path in re.findall(r"`([^`]+)`", owners):
            if not (ROOT / path).exists():
                missing.append((row.split("]")[0][3:], path))
    assert missing == []
    assert all(re.findall(r"`([^`]+)`", row.rsplit("|", 2)[-2]) for row in ROWS)


def test_the_readme_links_the_index() -> None:
    assert "docs/design/" in (ROOT / "README.md").read_text(encoding="utf-8")
