"""One table from ``baseline.store`` to the class that implements it.

The CLI and the Action both open their store here, from the same loaded config (with
the Action's inputs merged in by :meth:`~evalkit._spec.config.LoadedConfig.with_overrides`),
so ``evalkit.yaml`` means one store everywhere. Without GitHub access (the CLI) the
GitHub-backed stores answer ``missing`` and say which store and where they would look.
"""

from __future__ import annotations

from collections.abc import Mapping

from evalkit._spec.config import BaselineStoreName, LoadedConfig
from evalkit._store.file_store import FileStore, NoStore
from evalkit._store.protocol import BaselineStore, GitHubAccess
from evalkit.github.artifacts import ArtifactStore
from evalkit.github.branch_store import BranchStore

STORES: Mapping[BaselineStoreName, type[BaselineStore]] = {
    "artifact": ArtifactStore,
    "branch": BranchStore,
    "file": FileStore,
    "none": NoStore,
}


def open_store(config: LoadedConfig, access: GitHubAccess | None = None) -> BaselineStore:
    """The store ``config`` names (relative ``baseline.path`` from the config's folder)."""
    return STORES[config.baseline.kind].open(config, access)


__all__ = ["STORES", "open_store"]
