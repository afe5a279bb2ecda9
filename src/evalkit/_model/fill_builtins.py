"""Importing this module fills every registry table with the built-ins, now."""

from __future__ import annotations

from evalkit._model.builtin_hook import ensure

ensure("metrics", "loaders")
