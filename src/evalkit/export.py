"""Per-case rows out of evalkit: CSV files and (optionally) pandas DataFrames.

The public path (a face that only re-exports): the code lives in
:mod:`evalkit._spec.export`, and nothing inside evalkit imports this module.
"""

from __future__ import annotations

from evalkit._spec.export import (
    FIXED,
    Rows,
    rows_to_records,
    to_dataframe,
    write_csv,
)

__all__ = [
    "FIXED",
    "Rows",
    "rows_to_records",
    "to_dataframe",
    "write_csv",
]
