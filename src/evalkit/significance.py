"""Paired significance: did that change really improve anything, or did the number move?

The public path (a face that only re-exports): the code lives in
:mod:`evalkit.stats.significance`, and nothing inside evalkit imports this module.
"""

from __future__ import annotations

from evalkit.stats.significance import (
    RESAMPLING_STREAM,
    BootstrapResult,
    Comparison,
    PairedTestResult,
    PowerRow,
    PowerTable,
    StatWarning,
    analytic_power,
    compare_metrics,
    default_effects,
    familywise_false_alarm,
    holm,
    mde,
    n_for_effect,
    paired_bootstrap,
    paired_bootstrap_many,
    paired_test,
    power,
    power_table,
)

__all__ = [
    "BootstrapResult",
    "Comparison",
    "PairedTestResult",
    "PowerRow",
    "PowerTable",
    "RESAMPLING_STREAM",
    "StatWarning",
    "analytic_power",
    "compare_metrics",
    "default_effects",
    "familywise_false_alarm",
    "holm",
    "mde",
    "n_for_effect",
    "paired_bootstrap",
    "paired_bootstrap_many",
    "paired_test",
    "power",
    "power_table",
]
