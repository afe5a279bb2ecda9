"""evalkit's loggers, for library users: ``logging.getLogger("evalkit")`` and its children."""

from __future__ import annotations

import logging

PACKAGE = "evalkit"

_package = logging.getLogger(PACKAGE)
if not any(isinstance(h, logging.NullHandler) for h in _package.handlers):
    _package.addHandler(logging.NullHandler())


def get_logger(name: str) -> logging.Logger:
    """The logger of module ``name`` (``__name__``), a child of ``evalkit``."""
    return logging.getLogger(name)
