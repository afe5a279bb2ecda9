"""``evalkit compare``: paired tables of runs against a reference run."""

from __future__ import annotations

from evalkit._spec import checks
from evalkit._util import callable_module
from evalkit.gate.compare import (
    COMPARE_CORRECTIONS,
    CompareRow,
    CompareTable,
    RunComparison,
    check_compare_correction,
    choose_reference,
    compare_artifacts,
    compare_runs,
    run_labels,
)

__all__ = [
    "COMPARE_CORRECTIONS",
    "CompareRow",
    "CompareTable",
    "RunComparison",
    "check_compare_correction",
    "choose_reference",
    "compare_artifacts",
    "compare_runs",
    "run_labels",
]

# 0.2.0's `evalkit.compare(...)` was a function; the module stays callable.
callable_module.make_callable(__name__, checks.compare)
