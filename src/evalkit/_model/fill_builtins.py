"""Importing this module fills every registry table with the built-ins, now.

For :mod:`evalkit.registry`, whose 0.2.0 private tables (``_METRICS``, ``_LOADERS``...)
test suites read directly, before any registry function could fill them on first use
(:mod:`evalkit._model.builtin_hook`).
"""

from __future__ import annotations

from evalkit._model.builtin_hook import ensure_all

ensure_all()
