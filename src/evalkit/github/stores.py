"""One table from ``baseline.store`` to the class that implements it."""

from __future__ import annotations

from collections.abc import Mapping

from evalkit._spec.config import BaselineStoreName
from evalkit._store.file_store import FileStore, NoStore
from evalkit._store.protocol import BaselineStore, GitHubAccess, StoreSettings
from evalkit.github.artifacts import ArtifactStore
from evalkit.github.branch_store import BranchStore

STORES: Mapping[BaselineStoreName, type[BaselineStore]] = {
    "artifact": ArtifactStore,
    "branch": BranchStore,
    "file": FileStore,
    "none": NoStore,
}


def open_store(settings: StoreSettings, access: GitHubAccess | None = None) -> BaselineStore:
    """The store ``settings.baseline`` names (a relative path from the config's folder)."""
    return STORES[settings.baseline.kind].open(settings, access)


__all__ = ["STORES", "open_store"]
