"""Absolute links to evalkit's own docs, for reports read outside this repository."""

from __future__ import annotations

from typing import Final

from evalkit._version import __version__

REPOSITORY: Final = "https://github.com/skbugudi/evalkit"
DEFAULT_BRANCH: Final = "main"
#: Whether ``v{__version__}`` is a published tag. Set with the release: a test holds it
#: to the CHANGELOG (True exactly when this version's section has a date).
RELEASED: Final = False


def docs_ref() -> str:
    """The git ref the docs links point at: the release tag, else the default branch."""
    return f"v{__version__}" if RELEASED else DEFAULT_BRANCH


def docs_url(page: str, anchor: str = "") -> str:
    """``https://github.com/skbugudi/evalkit/blob/<ref>/docs/<page>[#anchor]``."""
    return f"{REPOSITORY}/blob/{docs_ref()}/docs/{page}" + (f"#{anchor}" if anchor else "")
