"""Load a script of this repository (benchmarks/, scripts/) as a module, to test its parts."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent.parent


def load_script(relative: str) -> ModuleType:
    """The module at ``ROOT / relative``, executed afresh (it is not a package module)."""
    path = ROOT / relative
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
