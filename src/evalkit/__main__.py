"""``python -m evalkit`` runs the CLI."""

from __future__ import annotations

import sys

from evalkit.cli import main

sys.exit(main())
