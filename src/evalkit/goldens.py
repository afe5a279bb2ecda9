"""Golden cases and golden sets (loaders live in :mod:`evalkit.golden_loaders`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from evalkit.errors import GoldenError


@dataclass(frozen=True)
class GoldenCase:
    """One hand-written case: what to ask, and what a good answer looks like.

    ``relevant`` holds the ids a retrieval target should return; ``grades``
    optionally maps ids to graded relevance (a set means grade 1); ``expected``
    is a reference answer for text targets; ``context`` keeps any other
    columns of the golden file, untouched.
    """

    id: str
    query: str
    relevant: frozenset[str] = frozenset()
    expected: str | None = None
    context: Mapping[str, Any] = field(default_factory=dict)
    grades: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id.strip():
            raise GoldenError(f"golden case id must be a non-empty string, got {self.id!r}")
        if not isinstance(self.query, str) or not self.query.strip():
            raise GoldenError(f"golden case {self.id!r}: query must be a non-empty string")
        if not isinstance(self.relevant, frozenset):
            object.__setattr__(self, "relevant", frozenset(self.relevant))


class GoldenSet:
    """An ordered collection of cases with unique ids."""

    def __init__(self, cases: Iterable[GoldenCase], *, source: str | None = None) -> None:
        self.source = source
        self._cases: dict[str, GoldenCase] = {}
        for case in cases:
            if case.id in self._cases:
                where = f"{source}: " if source else ""
                raise GoldenError(f"{where}duplicate case id {case.id!r}: ids must be unique")
            self._cases[case.id] = case

    def __iter__(self) -> Iterator[GoldenCase]:
        return iter(self._cases.values())

    def __len__(self) -> int:
        return len(self._cases)

    def __contains__(self, case_id: object) -> bool:
        return case_id in self._cases

    def __getitem__(self, index: int) -> GoldenCase:
        return list(self._cases.values())[index]

    def get(self, case_id: str) -> GoldenCase:
        """The case with this id; an unknown id raises :class:`GoldenError`."""
        try:
            return self._cases[case_id]
        except KeyError:
            where = f" in {self.source}" if self.source else ""
            raise GoldenError(f"no golden case with id {case_id!r}{where}") from None

    def ids(self) -> list[str]:
        """Case ids in file order."""
        return list(self._cases)

    def __repr__(self) -> str:
        where = f", source={self.source!r}" if self.source else ""
        return f"GoldenSet({len(self)} cases{where})"
