"""Make a module callable, for a name that is both a module and a function."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any


def make_callable(module_name: str, fn: Callable[..., Any]) -> None:
    """Calling the module ``module_name`` calls ``fn`` with the same arguments."""
    module = sys.modules[module_name]

    class CallableModule(types.ModuleType):
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return fn(*args, **kwargs)

    CallableModule.__name__ = f"{module_name}:callable"
    module.__class__ = CallableModule
