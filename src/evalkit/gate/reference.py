"""Drift checks: a comparison check decided against the pinned reference (issue #16).

"No significant regression against the last baseline" lets ten small losses in a row
through: each is within noise of the one before, and each is promoted.  A drift check
(``vs_reference:`` in the checks file) compares the candidate with a *reference* that
stays put until it is re-pinned, so the losses add up where the gate can see them.

It is decided by the very evaluation that decides vs_baseline checks
(:func:`evalkit.gate.procedure._vs_baseline`, told by
:class:`evalkit.gate.procedure.Against` which side it is on;
:func:`evalkit.gate.procedure.prepare_reference` sets it up): the same pairing by case
id over the cases unchanged since the reference, the same procedures, power statement and
multiple-comparison family.  This module only says what the reference is and which
references the gate accepts:

* :class:`Reference` — the gate's input: the store's answer (found / missing /
  expired) and, when found, the artefact.  Finding it is a use case
  (:mod:`evalkit._app.reference_lookup`); the gate reads no file and opens no store.
* a missing or expired reference makes every drift check ``no-reference``: never a
  pass (the gate's headline is at best ``warn``), and blocking when the checks file
  says ``require_reference: true``.
* goldens changed since the reference: the report says how many cases remain
  comparable (and the drift verdicts are decided on those).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from evalkit.errors import InputError

if TYPE_CHECKING:
    from evalkit._spec.artifact import RunArtifact
    from evalkit._spec.checks import CheckSpec

__all__ = [
    "NO_REFERENCE_GIVEN",
    "Reference",
    "ReferenceStatus",
    "check_reference",
    "refuse_unused",
    "wants_reference",
]

ReferenceStatus = Literal["found", "missing", "expired"]

NO_REFERENCE_GIVEN: Final = (
    "no reference was given (pass `evalkit gate --reference PATH`, or pin one: "
    "`evalkit pin`, the Action's `mode: pin`)"
)


@dataclass(frozen=True)
class Reference:
    """What drift checks compare with: a store's answer, and the artefact when found."""

    status: ReferenceStatus
    artifact: RunArtifact | None = None
    detail: str = ""  # one sentence: where it came from, or why there is none
    source: str = "none"  # the store that answered: "file", "branch", "artifact" or "none"
    sha: str | None = None  # the commit the reference was made from, when known
    path: Path | None = None  # the file it was read from, when it was read from one

    def __post_init__(self) -> None:
        if (self.status == "found") != (self.artifact is not None):
            raise InputError(
                f"a reference with status {self.status!r} "
                + ("needs its artefact" if self.status == "found" else "cannot carry one")
            )

    @classmethod
    def of(cls, artifact: RunArtifact, detail: str = "", source: str = "file") -> Reference:
        """A reference that was found: ``artifact``, described by ``detail``."""
        return cls("found", artifact, detail or f"reference {artifact.name!r}", source)

    @classmethod
    def none(cls, detail: str = NO_REFERENCE_GIVEN) -> Reference:
        """No reference: drift checks report ``no-reference``."""
        return cls("missing", None, detail)


def wants_reference(checks: Sequence[CheckSpec]) -> bool:
    """Whether any check is a drift check (only then is a reference fetched: its cost)."""
    return any(spec.vs_reference is not None for spec in checks)


def check_reference(
    reference: Reference | None,
    candidate: RunArtifact,
    checks: Sequence[CheckSpec],
    *,
    chosen: bool,
) -> Reference | None:
    """The reference ready for the gate; one the user chose must pair (else exit 2).

    Like a chosen baseline (:func:`evalkit.gate.inputs.check_baseline`): a file
    named with ``--reference`` that cannot be paired, or that no check compares
    with, is an input error rather than a quiet ``no-reference``.
    """
    from evalkit._spec.artifact import vouch_schema1_fingerprints
    from evalkit.gate.inputs import check_baseline

    if reference is None or reference.artifact is None:
        return reference
    art = vouch_schema1_fingerprints(reference.artifact)
    if chosen:
        refuse_unused(reference, checks)
        check_baseline(art, candidate, checks, role="reference")
    return replace(reference, artifact=art)


def refuse_unused(reference: Reference | None, checks: Sequence[CheckSpec]) -> None:
    """A reference the user named but no check compares with is a mistake (exit 2)."""
    if reference is None or wants_reference(checks):
        return
    raise InputError(
        f"{reference.detail}: no check compares with the reference; add a drift check "
        "(`vs_reference: no_significant_regression`, docs/drift.md) or drop --reference"
    )
