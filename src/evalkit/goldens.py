"""Golden cases, golden sets and their loaders: the public path, as in paired-evalkit 0.2.0.

A face for users: the model is :mod:`evalkit._model.golden_cases` and the loaders are
:mod:`evalkit._spec.golden_loaders`; nothing inside evalkit imports this module.
"""

from __future__ import annotations

from evalkit._model.golden_cases import GoldenCase, GoldenSet
from evalkit._spec.dataset_hubs import load_goldens
from evalkit._spec.golden_loaders import load_csv, load_jsonl, load_yaml
from evalkit.errors import GoldenError

__all__ = [
    "GoldenCase",
    "GoldenError",
    "GoldenSet",
    "load_csv",
    "load_goldens",
    "load_jsonl",
    "load_yaml",
]
