"""The built-in metrics and golden loaders are registered when the registry is first used.

They are defined above the registry (in :mod:`evalkit.metrics` and
:mod:`evalkit._spec.golden_loaders`), and importing them costs more than some commands
take (``evalkit --help``, issue 27).  So the package root hands over how to register
them (:func:`defer`), and every function of :mod:`evalkit._model.registry` that reads or
writes a table calls :func:`ensure` first: whichever module a program starts from, the
first lookup or registration finds the built-ins there, and a client's ``"csv"`` loader
or ``ndcg@10`` still clashes with them, as when they were registered at import.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

_pending: list[Callable[[], None]] = []
# Re-entrant: registering the built-ins calls the registry, which calls ensure() again.
_lock = threading.RLock()


def defer(register: Callable[[], None]) -> None:
    """Run ``register`` at the registry's first use (at once, if that has already come)."""
    with _lock:
        _pending.append(register)


def untouched() -> bool:
    """True until the registry's first use: no table holds anything yet, and the first
    use fills them with the built-ins alone.  So, until then, a built-in name means the
    built-in, whatever the program goes on to register (scoring a TREC run relies on it
    to skip loading the registry: :func:`evalkit._spec.trec.score_trec`)."""
    return bool(_pending)


def ensure() -> None:
    """Run the deferred registrations (once); a second thread waits until they are done."""
    if not _pending:
        return
    with _lock:
        while _pending:
            _pending.pop(0)()
