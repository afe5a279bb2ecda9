"""Deciding, purely: the gate's model and procedure, input refusals, drift, compare, trends.

Nothing here imports a store: the use cases turn a store's answer into gate inputs.
The gate's names are also read from here (``from evalkit.gate import evaluate_gate``,
as when the gate was one module), loaded on first use.
"""

from __future__ import annotations

from typing import Any

# name -> the module of this package that owns it
_OWNERS = {
    "evaluate_gate": "procedure",
    "pair_for_gate": "procedure",
    "prepare_reference": "procedure",
    "CaseDelta": "model",
    "CheckVerdict": "model",
    "Comparison": "model",
    "GateOptions": "model",
    "GateReport": "model",
    "ReferenceReport": "model",
    "RunSummary": "model",
    "STATUSES": "model",
    "Status": "model",
}


def __getattr__(name: str) -> Any:
    owner = _OWNERS.get(name)
    if owner is None:
        raise AttributeError(f"module 'evalkit.gate' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"evalkit.gate.{owner}"), name)
