"""Checks: what the gate enforces, read from YAML and refused at load when ambiguous.

The public path (a face that only re-exports): the code lives in
:mod:`evalkit._spec.checks`, and nothing inside evalkit imports this module.
"""

from __future__ import annotations

from evalkit._spec.checks import (
    ABS_TOL,
    CHECK_KEYS,
    DEFAULT_ALPHA,
    DEFAULT_METHOD,
    EQ_ABS_TOL,
    EQ_REL_TOL,
    FILE_KEYS,
    LEVELS,
    OPS,
    REL_TOL,
    VS_BASELINE,
    VS_BASELINE_MODES,
    CheckError,
    ChecksFile,
    CheckSpec,
    HasCaseId,
    Level,
    Op,
    RowT,
    VsBaseline,
    checks_from_data,
    compare,
    load_checks,
    load_checks_file,
)

__all__ = [
    "ABS_TOL",
    "CHECK_KEYS",
    "CheckError",
    "CheckSpec",
    "ChecksFile",
    "DEFAULT_ALPHA",
    "DEFAULT_METHOD",
    "EQ_ABS_TOL",
    "EQ_REL_TOL",
    "FILE_KEYS",
    "HasCaseId",
    "LEVELS",
    "Level",
    "OPS",
    "Op",
    "REL_TOL",
    "RowT",
    "VS_BASELINE",
    "VS_BASELINE_MODES",
    "VsBaseline",
    "checks_from_data",
    "compare",
    "load_checks",
    "load_checks_file",
]
