"""Golden cases and golden sets: the model (loaders live in :mod:`evalkit._spec.golden_loaders`)."""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from evalkit._model.clusters import ClusterAssignment
from evalkit._model.digest import sha256_json
from evalkit._model.slices import SliceAssignment
from evalkit.errors import GoldenError, UnknownCaseError

FINGERPRINT_VERSION = "1"


@dataclass(frozen=True)
class GoldenCase:
    """One hand-written case: what to ask, and what a good answer looks like.

    ``relevant`` holds the ids a retrieval target should return; ``grades`` optionally
    maps ids to graded relevance (a plain set means grade 1; without ``relevant`` the ids
    graded >= 1 are relevant, with it both must agree); ``expected`` is a reference answer
    for text targets; ``context`` keeps any other columns of the golden file, untouched.
    0.2.0's collection of ids as ``expected`` fills ``relevant`` (and stays readable as a
    frozenset); :attr:`expected_text` is the reference text only.
    """

    id: str
    query: str
    relevant: frozenset[str] = frozenset()
    expected: str | AbstractSet[str] | None = None
    context: Mapping[str, Any] = field(default_factory=dict)
    grades: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id.strip():
            raise GoldenError(f"golden case id must be a non-empty string, got {self.id!r}")
        if not isinstance(self.query, str) or not self.query.strip():
            raise GoldenError(f"golden case {self.id!r}: query must be a non-empty string")
        given: object = self.relevant  # typed input can still arrive untyped at runtime
        if isinstance(given, str):
            raise GoldenError(
                f"golden case {self.id!r}: relevant must be a collection of ids, not one string"
            )
        relevant = frozenset(self.relevant)
        expected: object = self.expected
        if isinstance(expected, list | tuple | set | frozenset):
            ids = frozenset(expected)
            if any(not isinstance(i, str) for i in ids):
                raise GoldenError(
                    f"golden case {self.id!r}: expected ids must all be strings, "
                    f"got {sorted(map(repr, ids))[0]}"
                )
            if relevant and relevant != ids:
                raise GoldenError(
                    f"golden case {self.id!r}: expected (a list of ids) and relevant name "
                    "different ids; give the relevant ids once"
                )
            relevant = ids
            object.__setattr__(self, "expected", ids)
        elif expected is not None and not isinstance(expected, str):
            raise GoldenError(
                f"golden case {self.id!r}: expected must be a list of ids, a string, or null; "
                f"got {type(expected).__name__}"
            )
        bad = [r for r in relevant if not isinstance(r, str) or not r]
        if bad:
            raise GoldenError(
                f"golden case {self.id!r}: relevant ids must be non-empty strings, got {bad[0]!r}"
            )
        grades = dict(self.grades)
        for doc, grade in grades.items():
            if not isinstance(doc, str) or not doc:
                raise GoldenError(
                    f"golden case {self.id!r}: graded ids must be non-empty strings, got {doc!r}"
                )
            if isinstance(grade, bool) or not isinstance(grade, int):
                raise GoldenError(
                    f"golden case {self.id!r}: grade of {doc!r} must be an integer, got {grade!r}"
                )
        if grades:
            graded_relevant = frozenset(doc for doc, grade in grades.items() if grade >= 1)
            if not relevant:
                relevant = graded_relevant
            elif relevant != graded_relevant:
                raise GoldenError(
                    f"golden case {self.id!r}: relevant and grades disagree "
                    f"(relevant must be exactly the ids graded >= 1); give only grades"
                )
        object.__setattr__(self, "relevant", relevant)
        object.__setattr__(self, "grades", grades)
        object.__setattr__(self, "context", dict(self.context))

    def __hash__(self) -> int:
        # The generated hash would hash the context dict and fail; id and query are
        # enough (equal cases have equal ids and queries).
        return hash((self.id, self.query))

    @property
    def expected_text(self) -> str | None:
        """The reference answer, or ``None`` (also when ``expected`` held ids)."""
        return self.expected if isinstance(self.expected, str) else None

    def effective_grades(self) -> dict[str, int]:
        """Grades as used by graded metrics: ``grades``, or grade 1 for each relevant id."""
        if self.grades:
            return dict(self.grades)
        return dict.fromkeys(self.relevant, 1)

    def canonical(self, without: AbstractSet[str] = frozenset()) -> dict[str, Any]:
        """The case as plain JSON data, in the form its fingerprint hashes.

        ``without`` names context fields (dotted for nested ones) left out: the slice
        dimensions, which label a case without changing what it asks (evalkit._model.slices).
        """
        context = _without(self.context, without) if without else self.context
        return {
            "id": self.id,
            "query": self.query,
            "relevant": sorted(self.relevant),
            # A list of ids and the same ids graded 1 are the same judgement.
            "grades": dict(sorted(self.effective_grades().items())),
            # Ids given as 0.2.0's list-valued `expected` are hashed as `relevant`,
            # so both spellings of one case share a fingerprint.
            "expected": self.expected_text,
            "context": _jsonable(context, f"golden case {self.id!r}: context"),
        }

    def fingerprint(self, without: AbstractSet[str] = frozenset()) -> str:
        """SHA-256 (hex) of the canonical JSON of this case (``without``: as for
        :meth:`canonical`, so tagging goldens keeps the fingerprints baselines recorded)."""
        return sha256_json({"v": FINGERPRINT_VERSION, "case": self.canonical(without)})


class CaseIds(list[str]):
    """A list of case ids that can also be called (0.2.0's ``ids`` and the spec's ``ids()``)."""

    def __call__(self) -> list[str]:
        return list(self)


class GoldenSet:
    """An ordered collection of cases with unique ids."""

    def __init__(
        self,
        cases: Iterable[GoldenCase],
        source: str | os.PathLike[str] | None = None,
        *,
        slices: Iterable[str] = (),
        clusters: str | None = None,
    ) -> None:
        self.source = None if source is None else os.fspath(source)
        # The declared slice dimensions (evalkit.yaml `slices:`): labels the case
        # fingerprints leave out and :meth:`slice_assignment` reads.
        self.slice_dimensions: tuple[str, ...] = tuple(slices)
        # The declared cluster field (evalkit.yaml `clusters:`): a label too, read by
        # :meth:`cluster_assignment` (evalkit._model.clusters).
        self.cluster_field = clusters
        self._cases: dict[str, GoldenCase] = {}
        for case in cases:
            if not isinstance(case, GoldenCase):
                raise GoldenError(
                    f"a GoldenSet holds GoldenCase objects, got {type(case).__name__}"
                )
            if case.id in self._cases:
                where = f"{source}: " if source else ""
                raise GoldenError(f"{where}duplicate case id {case.id!r}: ids must be unique")
            self._cases[case.id] = case
        self._order = list(self._cases.values())

    def __iter__(self) -> Iterator[GoldenCase]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)

    def __contains__(self, case_id: object) -> bool:
        return case_id in self._cases

    def __getitem__(self, index: int) -> GoldenCase:
        return self._order[index]

    def get(self, case_id: str) -> GoldenCase:
        """The case with this id; else :class:`UnknownCaseError` (also a ``KeyError``)."""
        try:
            return self._cases[case_id]
        except KeyError:
            where = f" in {self.source}" if self.source else ""
            raise UnknownCaseError(f"no case with id {case_id!r}{where}") from None

    @property
    def ids(self) -> CaseIds:
        """Case ids in file order: ``goldens.ids()`` and 0.2.0's ``goldens.ids`` both work."""
        return CaseIds(self._cases)

    def _like(self, cases: Iterable[GoldenCase], **declared: Any) -> GoldenSet:
        """``cases`` with this set's source, slices and clusters (``declared`` overrides)."""
        labels = {"slices": self.slice_dimensions, "clusters": self.cluster_field, **declared}
        return GoldenSet(cases, self.source, **labels)

    def with_slices(self, dimensions: Iterable[str]) -> GoldenSet:
        """The same cases with ``dimensions`` declared as slices (validated: a bad
        value raises :class:`GoldenError` naming the case)."""
        out = self._like(self._order, slices=dimensions)
        out.slice_assignment()
        return out

    def with_clusters(self, name: str | None) -> GoldenSet:
        """The same cases with ``name`` declared as the cluster field (validated: a bad
        value raises :class:`GoldenError` naming the case)."""
        out = self._like(self._order, clusters=name)
        out.cluster_assignment()
        return out

    def subset(self, keep: AbstractSet[str]) -> GoldenSet:
        """The cases whose id is in ``keep``, in order, with the same source and slices."""
        return self._like(c for c in self._order if c.id in keep)

    def slice_assignment(self) -> SliceAssignment | None:
        """Which slices each case is in (None when no slice is declared)."""
        if not self.slice_dimensions:
            return None
        fields = ((c.id, c.context) for c in self._order)
        return SliceAssignment.of(fields, self.slice_dimensions, self.source or "the goldens")

    def cluster_assignment(self) -> ClusterAssignment | None:
        """Each case's cluster (None when no cluster field is declared)."""
        if self.cluster_field is None:
            return None
        fields = ((c.id, c.context) for c in self._order)
        return ClusterAssignment.of(fields, self.cluster_field, self.source or "the goldens")

    def case_fingerprints(self) -> dict[str, str]:
        """``{case id: case fingerprint}`` in file order (slice fields left out).

        The cluster field stays in: goldens often carry it before it is declared
        (``metadata.doc_id``), and leaving it out would make declaring clusters change
        every case a baseline recorded."""
        without = frozenset(self.slice_dimensions)
        return {case.id: case.fingerprint(without) for case in self._order}

    def fingerprint(self) -> str:
        """SHA-256 (hex) over every case fingerprint, in order (not the ``source`` path)."""
        pairs = [[cid, fp] for cid, fp in self.case_fingerprints().items()]
        return sha256_json({"v": FINGERPRINT_VERSION, "cases": pairs})

    def __repr__(self) -> str:
        where = f", source={self.source!r}" if self.source else ""
        return f"GoldenSet({len(self)} cases{where})"


def _without(context: Mapping[str, Any], paths: AbstractSet[str]) -> dict[str, Any]:
    """``context`` without the fields at ``paths`` (dotted: inside nested mappings)."""
    out = dict(context)
    for path in paths:
        head, _, rest = path.partition(".")
        if head not in out:
            continue
        if not rest:
            del out[head]
        elif isinstance(out[head], Mapping):
            out[head] = _without(out[head], {rest})
    return out


def _jsonable(value: Any, what: str) -> Any:
    """Convert context values to JSON data with one meaning each, for hashing."""
    if value is None or isinstance(value, str | bool):
        return value
    if isinstance(value, int | float):
        # json writes NaN/Infinity as tokens: not portable JSON, but deterministic,
        # which is all a hash needs.
        return int(value) if isinstance(value, int) else float(value)
    if isinstance(value, Mapping):
        # Non-string keys (YAML allows them) get a typed prefix so 1 and "1" stay distinct.
        return {
            (k if isinstance(k, str) else f"{type(k).__name__}:{k!r}"): _jsonable(v, what)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [_jsonable(v, what) for v in value]
    if isinstance(value, set | frozenset):
        items = (_jsonable(v, what) for v in value)
        return sorted(items, key=lambda item: json.dumps(item, sort_keys=True))
    if isinstance(value, _dt.date | _dt.datetime | _dt.time):
        return value.isoformat()
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    item = getattr(value, "item", None)  # numpy scalars from custom loaders
    if callable(item):
        return _jsonable(item(), what)
    raise GoldenError(
        f"{what} holds a {type(value).__name__}, which cannot be fingerprinted; "
        "use strings, numbers, booleans, lists and mappings"
    )
