"""Opening the configured baseline store: the loaded config becomes plain values here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._store.protocol import StoreSettings

if TYPE_CHECKING:
    from evalkit._spec.config import LoadedConfig
    from evalkit._store.protocol import BaselineStore, GitHubAccess


def store_settings(config: LoadedConfig) -> StoreSettings:
    """What the store ``config`` names needs to open (defaults filled in)."""
    return StoreSettings(
        baseline=config.baseline,
        config_name=config.name,
        root=config.root,
        resolve=config.resolve,
    )


def open_config_store(config: LoadedConfig, access: GitHubAccess | None = None) -> BaselineStore:
    """The store ``config`` names, with ``access`` to GitHub (None: the CLI, without)."""
    # Here, not at the top: the GitHub stores pull in httpx and PyGithub, which a command
    # that opens no store (evalkit --help, run) must not pay for at start-up.
    from evalkit.github.stores import open_store

    return open_store(store_settings(config), access)


__all__ = ["open_config_store", "store_settings"]
