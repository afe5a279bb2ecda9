"""evalkit's loggers, for library users: ``logging.getLogger("evalkit")`` and its children.

The package logger carries a :class:`logging.NullHandler`, the standard library's advice
for libraries: evalkit configures no handler, level or format of its own, so nothing is
printed unless the program using it configures logging (docs/logging.md).  What is logged:
retries (a target's HTTP attempts, a judge's rate-limit waits) at INFO, cache hits and
skipped cases at DEBUG.  The CLI prints what it always printed; it attaches no handler.

``import evalkit`` imports this module, so the handler is in place before any other
evalkit module runs.
"""

from __future__ import annotations

import logging

PACKAGE = "evalkit"

_package = logging.getLogger(PACKAGE)
if not any(isinstance(h, logging.NullHandler) for h in _package.handlers):
    _package.addHandler(logging.NullHandler())


def get_logger(name: str) -> logging.Logger:
    """The logger of module ``name`` (``__name__``), a child of ``evalkit``."""
    return logging.getLogger(name)
