"""Opening the configured baseline store: the loaded config becomes plain values here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._store.protocol import StoreSettings

if TYPE_CHECKING:
    from evalkit._spec.config import LoadedConfig
    from evalkit._store.protocol import BaselineStore, GitHubAccess


def open_config_store(config: LoadedConfig, access: GitHubAccess | None = None) -> BaselineStore:
    """The store ``config`` names, with ``access`` to GitHub (None: the CLI, without)."""
    # Here, not at the top: the GitHub stores pull in httpx and PyGithub, which a command
    # that opens no store (evalkit --help, run) must not pay for at start-up.
    from evalkit.github.stores import open_store

    settings = StoreSettings(config.baseline, config.name, config.root, config.resolve)
    return open_store(settings, access)
