"""What a target is, and what it returns."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

# A response is a value of the model (rows carry it); 0.2.0 imported it from here.
from evalkit._model.results import TargetResponse
from evalkit.errors import TargetError

if TYPE_CHECKING:
    from evalkit._model.golden_cases import GoldenCase


@runtime_checkable
class Target(Protocol):
    """Anything with a ``name`` that turns a golden case into a response."""

    name: str

    def invoke(self, case: GoldenCase) -> TargetResponse: ...


__all__ = ["Target", "TargetError", "TargetResponse"]
