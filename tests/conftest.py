from __future__ import annotations

from collections.abc import Iterator

import pytest

import evalkit  # noqa: F401  (built-ins registered once, before any snapshot)
from evalkit._model import registry


@pytest.fixture(autouse=True)
def _isolated_registry() -> Iterator[None]:
    """Registrations made by a test never leak into the next one."""
    with registry.isolated():
        yield
