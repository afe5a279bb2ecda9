"""The ``evalkit`` command line: thin commands over the use cases in :mod:`evalkit._app`.

``evalkit.cli:process_main`` is the console script and ``python -m evalkit``;
:func:`main` runs one command in-process and returns its exit code (tests drive it).
"""

from __future__ import annotations

from evalkit.cli.root import app
from evalkit.cli.session import main, process_main

__all__ = ["app", "main", "process_main"]
