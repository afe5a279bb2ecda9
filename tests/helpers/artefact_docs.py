"""Run artefact files as tests look into and edit them: each row as an object of its cells.

Schema 3 stores a case as an array of the cells its ``columns`` header names once
(src/evalkit/_spec/artifact_rows.py).  A test that reads a value of a case or doctors a
file finds the cell by its name here, not by its position, and writes the file back in
the layout evalkit writes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def load_artefact(path: Path) -> dict[str, Any]:
    """The artefact document with each row as ``{column: cell}``."""
    doc: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    doc["rows"] = [dict(zip(doc["columns"], row, strict=True)) for row in doc["rows"]]
    return doc


def dump_artefact(doc: dict[str, Any], path: Path) -> Path:
    """Write a document of :func:`load_artefact` back with rows as arrays (a column a
    row lacks is ``null``)."""
    rows = [[row.get(column) for column in doc["columns"]] for row in doc["rows"]]
    Path(path).write_text(json.dumps({**doc, "rows": rows}), encoding="utf-8")
    return Path(path)
