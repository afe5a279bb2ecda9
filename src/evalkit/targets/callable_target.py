"""paired-evalkit 0.2.0's module path for :class:`~evalkit.targets.callable.CallableTarget`."""

from __future__ import annotations

from collections.abc import Callable

from evalkit._model.golden_cases import GoldenCase
from evalkit.targets._output import TargetOutput
from evalkit.targets.callable import CallableTarget

# What the wrapped function is: it answers one case with ids, text or a TargetResponse.
CallableFn = Callable[[GoldenCase], TargetOutput]

__all__ = ["CallableFn", "CallableTarget"]
