"""The statistics engine behind :mod:`evalkit.stats.significance` (pure numpy, no I/O)."""

from __future__ import annotations

from typing import Any

__all__ = ["RESAMPLING_STREAM"]


def __getattr__(name: str) -> Any:
    # lazy, so importing evalkit.stats.names (checks, gate) does not load numpy
    if name == "RESAMPLING_STREAM":
        from evalkit.stats.stream import RESAMPLING_STREAM

        return RESAMPLING_STREAM
    raise AttributeError(name)
