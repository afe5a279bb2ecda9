"""Systems under test: anything that turns a golden case into a response."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalkit._model.results import TargetResponse
from evalkit.errors import TargetError
from evalkit.targets.base import Target
from evalkit.targets.callable import CallableTarget

if TYPE_CHECKING:
    from evalkit.targets.http import HttpTarget

__all__ = ["CallableTarget", "HttpTarget", "Target", "TargetError", "TargetResponse"]


def __getattr__(name: str) -> Any:
    if name == "HttpTarget":
        from evalkit.targets.http import HttpTarget

        return HttpTarget
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
