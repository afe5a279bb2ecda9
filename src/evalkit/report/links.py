"""Absolute links to evalkit's own docs, for reports read outside this repository.

A PR comment is read in the *user's* repository, where a relative ``docs/drift.md``
points nowhere. Links go to the docs of the running version's tag, so they describe
the behaviour the reader got, or to the default branch while that version is not
released yet (its tag does not exist until then).
"""

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


__all__ = ["REPOSITORY", "docs_ref", "docs_url"]
