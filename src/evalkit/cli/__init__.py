"""The ``evalkit`` command line: thin commands over the use cases in :mod:`evalkit._app`.

``evalkit.cli:process_main`` is the console script and ``python -m evalkit``;
:func:`main` runs one command in-process and returns its exit code (tests drive it).

One module per command group (:mod:`~evalkit.cli.run`, :mod:`~evalkit.cli.trec`,
:mod:`~evalkit.cli.gate`, :mod:`~evalkit.cli.baselines`, :mod:`~evalkit.cli.inspect`,
:mod:`~evalkit.cli.action`); the options they share, the output
helpers and the interruption line in :mod:`~evalkit.cli.common`; the app in
:mod:`~evalkit.cli.root`; argv to exit code in :mod:`~evalkit.cli.session`.
"""

from __future__ import annotations

from evalkit.cli.root import app
from evalkit.cli.session import main, process_main

__all__ = ["app", "main", "process_main"]
