"""``python -m evalkit`` runs the CLI, as the ``evalkit`` command does."""

from __future__ import annotations

from evalkit.cli import process_main

process_main()
