"""What every paid judge honours, whoever built it: cache-only mode and a pre-flight check."""

from __future__ import annotations

import threading
from collections.abc import Iterable

_lock = threading.Lock()
_cache_only = False


def set_cache_only(enabled: bool) -> None:
    """Make every judge in this process grade from its cache only (or stop doing so)."""
    global _cache_only
    with _lock:
        _cache_only = bool(enabled)


def cache_only() -> bool:
    """Whether judges must grade from their cache only (``--judge-cache-only``)."""
    with _lock:
        return _cache_only


def run_preflights(metrics: Iterable[object]) -> None:
    """Call ``preflight()`` once on each distinct metric object that has one, in order."""
    seen: set[int] = set()
    for fn in metrics:
        preflight = getattr(fn, "preflight", None)
        if id(fn) in seen or preflight is None:
            continue
        seen.add(id(fn))
        preflight()
