"""The release number, in one place."""

from __future__ import annotations

__version__ = "0.3.0"
