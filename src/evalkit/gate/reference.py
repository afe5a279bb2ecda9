"""Drift checks: a comparison check decided against the pinned reference (issue #16)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from evalkit.errors import InputError

if TYPE_CHECKING:
    from evalkit._spec.artifact import RunArtifact
    from evalkit._spec.checks import CheckSpec


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
    """The reference ready for the gate; one the user chose must pair (else exit 2)."""
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
