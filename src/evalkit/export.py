"""Per-case rows out of evalkit: CSV files and (optionally) pandas DataFrames."""

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
