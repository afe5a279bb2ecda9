"""Drift checks: a comparison check decided against the pinned reference (issue #16).

"No significant regression against the last baseline" lets ten small losses in a row
through: each is within noise of the one before, and each is promoted.  A drift check
(``vs_reference:`` in the checks file) compares the candidate with a *reference* that
stays put until it is re-pinned, so the losses add up where the gate can see them.

It is decided by the very evaluation that decides vs_baseline checks
(:func:`evalkit.gate._vs_baseline`, told by :class:`evalkit.gate.Against` which side it
is on): the same pairing by case id over the cases unchanged since the reference, the
same procedures, power statement and multiple-comparison family.  This module only
says what the reference is and what became of it:

* :class:`Reference` — the gate's input: the store's answer (found / missing /
  expired, as :class:`evalkit.stores.BaselineFetch` gives it) and, when
  found, the artefact.  :func:`reference_from_fetch` reads it (the gate reads no file).
* a missing or expired reference makes every drift check ``no-reference``: never a
  pass (the gate's headline is at best ``warn``), and blocking when the checks file
  says ``require_reference: true``.
* goldens changed since the reference: the report says how many cases remain
  comparable (and the drift verdicts are decided on those).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from evalkit.errors import InputError
from evalkit.gate import (
    Against,
    CheckVerdict,
    GateOptions,
    GateReport,
    GoldensDiff,
    ReferenceReport,
    _summary,
    _vs_baseline,
    goldens_diff,
)
from evalkit.gate_inputs import account_for_failed_baseline, failed_baseline_note, shown

if TYPE_CHECKING:
    from evalkit.artifact import RunArtifact
    from evalkit.checks import CheckSpec
    from evalkit.config import LoadedConfig
    from evalkit.results import RunResult
    from evalkit.stats.procedures import Evaluator
    from evalkit.stores import BaselineFetch, BaselineStore
    from evalkit.trend import MetricTrend

__all__ = [
    "NO_REFERENCE_GIVEN",
    "DriftTrend",
    "PreparedReference",
    "Reference",
    "check_reference",
    "comparable_note",
    "fetch_for_action",
    "find_reference",
    "prepare",
    "reference_from_fetch",
    "refuse_unused",
    "report_trends",
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


def reference_from_fetch(fetch: BaselineFetch, config_name: str | None = None) -> Reference:
    """The gate's :class:`Reference` for a store's answer (reads the artefact when found).

    With ``config_name``, a reference recorded for another config is refused (exit 2),
    as a baseline is: it would gate one config against the other's numbers.
    """
    from evalkit.artifact import read_artifact
    from evalkit.gate_inputs import refuse_other_config

    if fetch.status == "found" and fetch.path is not None:
        art = read_artifact(Path(fetch.path))
        if config_name is not None:
            refuse_other_config(art, config_name, f"reference ({fetch.detail})")
        sha = fetch.sha or art.git_commit
        return Reference("found", art, fetch.detail, fetch.source, sha, Path(fetch.path))
    status: ReferenceStatus = "expired" if fetch.status == "expired" else "missing"
    return Reference(status, None, fetch.detail, fetch.source, fetch.sha)


def _missing_detail(ref: Reference) -> str:
    word = "expired" if ref.status == "expired" else "missing"
    return f"{word} ({ref.detail})" if ref.detail else word


@dataclass(frozen=True)
class PreparedReference:
    """One gate's reference, with its goldens diff worked out once for every drift check."""

    reference: Reference
    diff: GoldensDiff
    report: ReferenceReport
    against: Against = field(default_factory=lambda: Against("vs_reference", "reference"))

    def verdict(
        self,
        spec: CheckSpec,
        candidate: RunArtifact,
        options: GateOptions,
        pairs: dict[str, tuple[RunResult[Any], RunResult[Any]]],
        evaluators: dict[str, Evaluator],
    ) -> CheckVerdict:
        """Decide one vs_reference check: the vs_baseline evaluation, against the reference."""
        return _vs_baseline(
            spec,
            candidate,
            self.reference.artifact,
            self.diff,
            options,
            pairs,
            evaluators,
            against=self.against,
        )

    def account_for_failed(
        self, verdict: CheckVerdict, spec: CheckSpec, candidate: RunArtifact
    ) -> CheckVerdict:
        """Failed reference cases never turn a drift check green (gate_inputs' one rule)."""
        return account_for_failed_baseline(verdict, spec, candidate, self.reference.artifact)

    def notes(self, baseline: RunArtifact | None = None) -> list[str]:
        """Report-level lines: what still pairs with the reference, what failed in it."""
        out: list[str] = []
        r = self.report
        if r.run is not None and not self.diff.empty:
            out.append(comparable_note(r))
        if r.run is not None and baseline is not None and r.run == _summary(baseline):
            out.append(
                "the reference is the current baseline, so each drift check repeats its "
                "per-PR comparison until later promotions land"
            )
        failed = failed_baseline_note(self.reference.artifact, "reference")
        if failed:
            out.append(failed)
        return out


def comparable_note(report: ReferenceReport) -> str:
    """``goldens changed since the reference …: 83 of 100 cases remain comparable``."""
    d = report.goldens_diff
    parts = [
        f"{len(ids)} {word}"
        for ids, word in ((d.added, "added"), (d.removed, "removed"), (d.changed, "changed"))
        if ids
    ]
    changed = f"; changed: {shown(list(d.changed))}" if d.changed else ""
    return (
        f"goldens changed since the reference ({', '.join(parts)}): {report.comparable} of "
        f"{report.n_cases} case(s) remain comparable, and drift checks are decided on "
        f"those{changed}"
    )


def prepare(
    checks: Sequence[CheckSpec], candidate: RunArtifact, reference: Reference | None
) -> PreparedReference | None:
    """The reference side of one gate, or None when no check compares with a reference."""
    if not wants_reference(checks):
        return None
    ref = reference if reference is not None else Reference.none()
    n = len(candidate.result)
    if ref.artifact is None:
        report = ReferenceReport(ref.status, ref.detail, ref.source, n_cases=n, sha=ref.sha)
        against = Against("vs_reference", "reference", _missing_detail(ref))
        return PreparedReference(ref, GoldensDiff(), report, against)
    diff = goldens_diff(candidate, ref.artifact)
    report = ReferenceReport(
        ref.status,
        ref.detail,
        ref.source,
        run=_summary(ref.artifact),
        goldens_diff=diff,
        comparable=n - len(diff.added) - len(diff.changed),
        n_cases=n,
        sha=ref.sha or ref.artifact.git_commit,
    )
    return PreparedReference(ref, diff, report)


# ----------------------------------------------------------------------------- inputs


def wants_reference(checks: Sequence[CheckSpec]) -> bool:
    """Whether any check is a drift check (only then is a reference fetched: its cost)."""
    return any(spec.vs_reference is not None for spec in checks)


def find_reference(
    config: LoadedConfig, override: str | Path | None, checks: Sequence[CheckSpec]
) -> Reference | None:
    """The reference a local gate compares drift checks with (None: no check needs one).

    ``override`` is ``evalkit gate --reference PATH``: that file, refused when it is
    another config's run (like ``--baseline``).  Otherwise the configured store's
    pinned reference (``evalkit pin``); a GitHub store, which only the Action reads,
    answers ``missing`` and says so.
    """
    from evalkit.artifact import read_artifact
    from evalkit.gate_inputs import refuse_other_config
    from evalkit.github.stores import open_store
    from evalkit.stores import FetchRequest

    if override is not None:
        origin = f"reference {override}"
        art = read_artifact(override)
        refuse_other_config(art, config.name, origin)
        return Reference("found", art, origin, "file", art.git_commit, Path(override))
    if not wants_reference(checks):
        return None
    fetched = open_store(config).fetch_reference(FetchRequest(config.name, config.fetched_dir))
    return reference_from_fetch(fetched, config.name)


def fetch_for_action(
    store: BaselineStore, config: LoadedConfig, dest_dir: Path
) -> BaselineFetch | None:
    """The Action's reference fetch: the store's pinned reference, when a check needs it.

    A checks file that does not load is left for the gate to report (None here).
    """
    from evalkit.checks import load_checks_file
    from evalkit.errors import CheckError
    from evalkit.stores import FetchRequest

    try:
        checks = load_checks_file(config.resolve(config.model.checks)).checks
    except CheckError:
        return None
    if not wants_reference(checks):
        return None
    dest_dir.mkdir(parents=True, exist_ok=True)
    return store.fetch_reference(FetchRequest(config.name, dest_dir))


def check_reference(
    reference: Reference | None,
    candidate: RunArtifact,
    checks: Sequence[CheckSpec],
    *,
    chosen: bool,
) -> Reference | None:
    """The reference ready for the gate; one the user chose must pair (else exit 2).

    Like a chosen baseline (:func:`evalkit.gate_inputs.check_baseline`): a file
    named with ``--reference`` that cannot be paired, or that no check compares
    with, is an input error rather than a quiet ``no-reference``.
    """
    from evalkit.artifact import vouch_schema1_fingerprints
    from evalkit.gate_inputs import check_baseline

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


# ----------------------------------------------------------------------------- trend


@dataclass(frozen=True)
class DriftTrend:
    """What the HTML report draws under the drift checks."""

    trends: Sequence[MetricTrend] = ()
    note: str | None = None  # why there is no trend
    reference_at: int | None = None  # the pinned reference's point, when it is a promotion


def report_trends(
    config: LoadedConfig,
    report: GateReport,
    candidate: Path | None,
    reference: Reference | None,
    *,
    store: BaselineStore | None = None,
    work: Path | None = None,
) -> DriftTrend:
    """The HTML report's trend of each drift-checked metric, the candidate last.

    The store's promotions (``evalkit history``'s own view and steps, from
    :mod:`evalkit.promotions`); a history that cannot be read is a note on the page,
    never a failed gate: the verdicts are already decided.  The reference is the
    promotion whose artefact has the same bytes (a pin is a copy), if there is one.
    ``store``/``work``: the Action's store (with GitHub access) and where it fetches
    the promotions; the CLI leaves them to the config (no GitHub access).
    """
    from evalkit.errors import EvalkitError
    from evalkit.promotions import history_view

    if report.reference is None:
        return DriftTrend()
    metrics = list(dict.fromkeys(v.metric for v in report.verdicts if v.kind == "vs_reference"))
    try:
        view = history_view(config, metrics=metrics, candidate=candidate, store=store, work=work)
    except EvalkitError as exc:
        return DriftTrend(note=f"trend across promotions not drawn: {exc}")
    entries = view.history.entries
    if not entries:
        return DriftTrend(note=f"trend across promotions not drawn: {view.history.detail}")
    pinned = _digest(reference.path) if reference is not None and reference.path else None
    at = next((i for i, e in enumerate(entries) if pinned and _digest(e.path) == pinned), None)
    return DriftTrend(view.trends, None, at)


def _digest(path: Path) -> str | None:
    import hashlib

    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None
