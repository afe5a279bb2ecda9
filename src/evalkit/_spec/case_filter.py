"""``-k``/``--case``: run or gate a few cases, and never mistake them for the whole set.

The rules (what matches, where a subset run goes, why its gate is ``incomplete``):
docs/design/case-filters.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from evalkit._model.golden_cases import GoldenSet
from evalkit._model.results import RunResult
from evalkit._util.suggest import did_you_mean
from evalkit.errors import InputError

if TYPE_CHECKING:
    from evalkit._spec.artifact import RunArtifact
    from evalkit._spec.checks import CheckSpec


@dataclass(frozen=True)
class CaseFilter:
    """What ``-k`` and ``--case`` asked for (empty: every case)."""

    keywords: tuple[str, ...] = ()
    ids: tuple[str, ...] = ()

    @classmethod
    def of(cls, keywords: Sequence[str] | None, ids: Sequence[str] | None) -> CaseFilter | None:
        """The filter the command line gave, or ``None`` when it gave none."""
        made = cls(tuple(keywords or ()), tuple(ids or ()))
        for word in made.keywords:
            if not word.strip():
                raise InputError("-k needs a non-empty part of a case id, e.g. -k refund")
        return made if (made.keywords or made.ids) else None

    def describe(self) -> str:
        """The filter as typed: ``-k refund --case c-12``."""
        parts = [f"-k {word}" for word in self.keywords] + [f"--case {cid}" for cid in self.ids]
        return " ".join(parts)

    def matches(self, case_id: str) -> bool:
        lowered = case_id.lower()
        return case_id in self.ids or any(word.lower() in lowered for word in self.keywords)

    def select(self, goldens: GoldenSet) -> tuple[GoldenSet, Subset]:
        """The kept cases (in golden-file order) and the :class:`Subset` they make."""
        where = goldens.source or "the golden set"
        all_ids = goldens.ids()
        unknown = [cid for cid in self.ids if cid not in goldens]
        if unknown:
            raise InputError(
                f"--case {unknown[0]}: {where} has no case {unknown[0]!r}"
                f"{did_you_mean(unknown[0], all_ids)}"
                + (f" (and {len(unknown) - 1} more unknown)" if len(unknown) > 1 else "")
            )
        cases = [case for case in goldens if self.matches(case.id)]
        if not cases:
            raise InputError(
                f"{self.describe()} matches none of the {len(goldens)} case(s) in {where}; "
                "-k keeps the cases whose id contains it (ignoring case)"
            )
        source = f"{goldens.source} [{self.describe()}]" if goldens.source else None
        subset = Subset(self.describe(), tuple(c.id for c in cases), len(goldens))
        return GoldenSet(
            cases, source=source, slices=goldens.slice_dimensions, clusters=goldens.cluster_field
        ), subset


@dataclass(frozen=True)
class Subset:
    """Some of a golden set's cases, chosen on the command line."""

    selection: str  # the filter as typed, e.g. "-k refund"
    ids: tuple[str, ...]  # the kept cases, in golden-file order
    n_total: int  # cases in the whole golden set

    @property
    def n_selected(self) -> int:
        return len(self.ids)

    def only(self, art: RunArtifact) -> RunArtifact:
        """``art`` with the rows of the kept cases only (a baseline, or a whole candidate)."""
        keep = set(self.ids)
        rows = [row for row in art.result.per_query if row.query_id in keep]
        return replace(art, result=RunResult(art.result.name, rows))

    def goldens(self, goldens: GoldenSet) -> GoldenSet:
        return goldens.subset(set(self.ids))

    def checks(self, checks: Sequence[CheckSpec]) -> tuple[list[CheckSpec], list[str]]:
        """The checks over the kept cases (a scope narrowed to them), and a note per check
        whose scope holds none of them (left out: it has nothing to decide on)."""
        keep = set(self.ids)
        kept: list[CheckSpec] = []
        notes: list[str] = []
        for spec in checks:
            if spec.scope is None:
                kept.append(spec)
                continue
            scope = tuple(cid for cid in spec.scope if cid in keep)
            if scope:
                kept.append(replace(spec, scope=scope))
            else:
                notes.append(
                    f"check {spec.id!r} not decided: none of its {len(spec.scope)} scoped "
                    f"case(s) is in the subset ({self.selection})"
                )
        return kept, notes
