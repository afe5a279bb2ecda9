"""The built-in metrics and golden loaders are registered when the registry is first used."""

from __future__ import annotations

from _thread import RLock  # threading's own RLock, without importing threading
from collections.abc import Callable

# What each group of tables waits for: the metric tables (case metrics, aggregates,
# families) and the golden loaders fill apart, so looking up a metric loads no loader.
_pending: dict[str, list[Callable[[], None]]] = {"metrics": [], "loaders": []}
# Re-entrant: registering the built-ins calls the registry, which calls ensure() again,
# and returns at once in that thread (_running); any other thread waits on the lock.
_lock = RLock()
_running: set[str] = set()


def defer(register: Callable[[], None], *, loaders: bool = False) -> None:
    """Run ``register`` at the first use of the metric tables (of the loader table, with
    ``loaders``)."""
    with _lock:
        _pending["loaders" if loaders else "metrics"].append(register)


def ensure() -> None:
    """Fill the metric tables (once); a second thread waits until they are filled."""
    _ensure("metrics")


def ensure_loaders() -> None:
    """Fill the loader table (once), as :func:`ensure` the metric tables."""
    _ensure("loaders")


def ensure_all() -> None:
    """Fill every table: for what reads or resets them all."""
    _ensure("metrics")
    _ensure("loaders")


def _ensure(tables: str) -> None:
    pending = _pending[tables]
    if not pending and tables not in _running:
        return
    with _lock:
        if tables in _running:
            return  # called from inside the registration, which goes on
        _running.add(tables)
        try:
            while pending:
                pending.pop(0)()
        finally:
            _running.discard(tables)
