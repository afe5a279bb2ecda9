"""One table from ``baseline.store`` to the class that implements it.

The CLI and the Action both open their store here, from the same loaded config (with
the Action's inputs merged in by :meth:`~evalkit.config.LoadedConfig.with_overrides`),
so ``evalkit.yaml`` means one store everywhere. Without GitHub access (the CLI) the
GitHub-backed stores answer ``missing`` and say which store and where they would look.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from evalkit.config import BaselineConfig, BaselineStoreName, LoadedConfig
from evalkit.github.artifacts import ArtifactStore
from evalkit.github.baseline import BaselineStore, FileStore, GitHubAccess, NoStore
from evalkit.github.branch_store import BranchStore

StoreFactory = Callable[[BaselineConfig, Path, GitHubAccess | None], BaselineStore]


def _file(section: BaselineConfig, root: Path, _access: GitHubAccess | None) -> BaselineStore:
    assert section.path is not None  # BaselineConfig: store file needs a path
    path = Path(section.path).expanduser()
    return FileStore(path if path.is_absolute() else root / path, key="baseline.path")


STORES: Mapping[BaselineStoreName, StoreFactory] = {
    "artifact": lambda section, _root, access: ArtifactStore(access, name=section.name),
    "branch": lambda section, _root, access: BranchStore(access, branch=section.branch),
    "file": _file,
    "none": lambda _section, _root, _access: NoStore(),
}


def open_store(config: LoadedConfig, access: GitHubAccess | None = None) -> BaselineStore:
    """The store ``config`` names (relative ``baseline.path`` from the config's folder)."""
    section = config.baseline
    return STORES[section.kind](section, config.root, access)


__all__ = ["STORES", "open_store"]
