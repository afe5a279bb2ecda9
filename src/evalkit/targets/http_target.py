"""paired-evalkit 0.2.0's module path for :class:`~evalkit.targets.http.HttpTarget`.

Importing it loads httpx, like importing :mod:`evalkit.targets.http` does.
"""

from __future__ import annotations

from evalkit.targets.http import DEFAULT_META_KEYS, BuildPayload, Extract, HttpTarget

__all__ = ["DEFAULT_META_KEYS", "BuildPayload", "Extract", "HttpTarget"]
