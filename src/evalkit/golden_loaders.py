"""Read golden sets from JSONL, YAML and CSV files, failing loudly on anything odd.

The public path (a face that only re-exports): the code lives in
:mod:`evalkit._spec.golden_loaders`, and nothing inside evalkit imports this module.
"""

from __future__ import annotations

from evalkit._spec.dataset_hubs import load_goldens
from evalkit._spec.golden_loaders import (
    BUILTIN_LOADERS,
    CSV_RELEVANT_SEPARATOR,
    KNOWN_FIELDS,
    Loader,
    load_csv,
    load_jsonl,
    load_yaml,
)

__all__ = [
    "BUILTIN_LOADERS",
    "CSV_RELEVANT_SEPARATOR",
    "KNOWN_FIELDS",
    "Loader",
    "load_csv",
    "load_goldens",
    "load_jsonl",
    "load_yaml",
]
