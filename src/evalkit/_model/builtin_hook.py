"""The built-in metrics and golden loaders are registered when the registry is first used."""

from __future__ import annotations

from _thread import RLock  # threading's own RLock, without importing threading
from collections.abc import Callable
from typing import Literal

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


def ensure(*groups: Literal["metrics", "loaders"]) -> None:
    """Fill each group of tables once (none named: the metric tables); a second thread
    waits until they are filled."""
    for tables in groups or ("metrics",):
        pending = _pending[tables]
        if not pending and tables not in _running:
            continue
        with _lock:
            if tables in _running:
                continue  # called from inside the registration, which goes on
            _running.add(tables)
            try:
                while pending:
                    pending.pop(0)()
            finally:
                _running.discard(tables)
