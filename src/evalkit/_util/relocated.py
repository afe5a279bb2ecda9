"""The 0.3.0 development paths that moved into the layer packages, still importable.

Before the layer packages (issue 22) evalkit's modules sat flat at the top of the
package; scripts and tools written against those builds import e.g.
``evalkit.artifact``.  Those paths were never promised (0.2.0 had none of them, and the
public ones stay as faces), so instead of a module per old name one table maps each to
its owner, and a finder serves the owner itself under the old name: the same module
object, so ``monkeypatch.setattr`` and ``isinstance`` see one thing.  Each use warns
once (``DeprecationWarning``), naming the new path.  The table goes in 0.4.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import Final

# old dotted path -> the module that owns its code now
MOVED: Final[dict[str, str]] = {
    "evalkit._atomic": "evalkit._util.atomic",
    "evalkit._bounded": "evalkit._util.bounded",
    "evalkit._callable_module": "evalkit._util.callable_module",
    "evalkit._gitdir": "evalkit._util.gitdir",
    "evalkit._paths": "evalkit._util.paths",
    "evalkit._ratelimit": "evalkit._util.ratelimit",
    "evalkit._signals": "evalkit._util.signals",
    "evalkit._suggest": "evalkit._util.suggest",
    "evalkit._text": "evalkit._util.text",
    "evalkit._yaml": "evalkit._util.yaml_files",
    "evalkit._yaml_values": "evalkit._util.yaml_values",
    "evalkit.action_gate": "evalkit.action.gate_runner",
    "evalkit.artifact": "evalkit._spec.artifact",
    "evalkit.case_filter": "evalkit._spec.case_filter",
    "evalkit.checkpoint": "evalkit._engine.checkpoint",
    "evalkit.client_load": "evalkit._engine.client_load",
    "evalkit.code_identity": "evalkit._model.code_identity",
    "evalkit.compare_render": "evalkit.report.compare_tables",
    "evalkit.config": "evalkit._spec.config",
    "evalkit.drift": "evalkit.gate.reference",
    "evalkit.file_store": "evalkit._store.file_store",
    "evalkit.formats": "evalkit._model.formats",
    "evalkit.gate_inputs": "evalkit.gate.inputs",
    "evalkit.github.action": "evalkit.action.run",
    "evalkit.golden_cases": "evalkit._model.golden_cases",
    "evalkit.history": "evalkit._store.history",
    "evalkit.limits": "evalkit._util.limits",
    "evalkit.metric_entries": "evalkit._spec.metric_entries",
    "evalkit.metric_identity": "evalkit._model.metric_identity",
    "evalkit.pipeline": "evalkit._app.pipeline",
    "evalkit.promotions": "evalkit._app.promotions",
    "evalkit.provenance": "evalkit._app.provenance",
    "evalkit.pvalues": "evalkit._util.pvalues",
    "evalkit.reference_lookup": "evalkit._app.reference_lookup",
    "evalkit.relevance": "evalkit._model.relevance",
    "evalkit.retry_after": "evalkit._util.retry_after",
    "evalkit.shards": "evalkit._engine.shards",
    "evalkit.show": "evalkit._app.show",
    "evalkit.stores": "evalkit._store.protocol",
    "evalkit.trend": "evalkit.gate.trend",
    "evalkit.trials": "evalkit._engine.trials",
    "evalkit.units": "evalkit._util.units",
}


class _Alias:
    """Loads an old path as the module that owns it now (a loader, by its two methods;
    importlib.abc is not imported for it, to keep ``import evalkit`` light)."""

    def __init__(self, owner: str) -> None:
        self.owner = owner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(
            f"{spec.name} moved to {self.owner} in evalkit 0.3.0; import it from there "
            "(the old path goes in 0.4)",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module(self.owner)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the owner was executed when it was imported."""


class _MovedFinder:
    """A meta path finder that answers only for the table's old paths."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,  # noqa: ARG002 (the finder protocol's)
        target: ModuleType | None = None,  # noqa: ARG002
    ) -> importlib.machinery.ModuleSpec | None:
        owner = MOVED.get(fullname)
        if owner is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(owner))  # type: ignore[arg-type]


_FINDER: Final = _MovedFinder()


def install() -> None:
    """Serve the moved paths (idempotent; it answers for nothing but the table's names)."""
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(_FINDER)
