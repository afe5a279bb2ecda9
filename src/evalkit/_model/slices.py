"""Slices: which cases share a tag or a field value, read once from the goldens (issue 28).

Labels, not part of what a case asks: fingerprinted apart (docs/design/code-notes.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from evalkit._model.digest import sha256_json
from evalkit.errors import GoldenError

#: Fields that define a case: never a slice dimension.
RESERVED_FIELDS: Final = ("id", "query", "relevant", "expected", "grades")
SLICE_FINGERPRINT_VERSION: Final = "1"


@dataclass(frozen=True, order=True)
class SliceKey:
    """One slice: a dimension and one of its values (``tags=billing``)."""

    dimension: str
    value: str

    def __str__(self) -> str:
        return f"{self.dimension}={self.value}"


def parse_slice_key(text: str) -> SliceKey:
    """``tags=billing`` as a :class:`SliceKey`; a bare ``billing`` keeps the dimension empty
    (matched against every dimension by :meth:`SliceAssignment.resolve`)."""
    dimension, sep, value = text.partition("=")
    if not sep:
        return SliceKey("", text.strip())
    return SliceKey(dimension.strip(), value.strip())


def field_or_none(context: Mapping[str, Any], dimension: str) -> Any:
    """The value at ``dimension`` (dotted for nested mappings) of a case's fields; None
    when it lacks it (a missing field and a null one both mean no value)."""
    node: Any = context
    for part in dimension.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def slice_values(value: Any, case_id: str, dimension: str, where: str) -> tuple[str, ...]:
    """A case's slice values of one dimension: ``()`` when it has none.

    Text, integers and booleans are one value (read as written); a list is one value
    per item, each of those kinds.  Anything else is refused, naming the case: a slice
    label that is a mapping or a float would be a guess at what was meant.
    """
    if value is None:
        return ()
    items = value if isinstance(value, list | tuple) else [value]
    out: list[str] = []
    for item in items:
        if isinstance(item, bool):
            text = "true" if item else "false"
        elif isinstance(item, int | str):
            text = str(item).strip()
        else:
            kind = "null" if item is None else type(item).__name__
            raise GoldenError(
                f"{where}: case {case_id!r}: slice field {dimension!r} must be text or a list "
                f"of text (a tag per item), got {kind} {item!r}"
            )
        if not text:
            raise GoldenError(
                f"{where}: case {case_id!r}: slice field {dimension!r} holds an empty value; "
                "remove it or fill it in"
            )
        if text not in out:
            out.append(text)
    return tuple(out)


@dataclass(frozen=True)
class SliceAssignment:
    """Which slices every case is in, for the declared dimensions.

    ``members`` maps a case id to ``{dimension: values}`` (every case of the goldens,
    with ``()`` where it has no value), in file order.
    """

    dimensions: tuple[str, ...]
    members: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)

    @classmethod
    def of(
        cls, cases: Iterable[tuple[str, Mapping[str, Any]]], dimensions: Iterable[str], where: str
    ) -> SliceAssignment:
        """The assignment of ``(case id, fields)`` pairs; ``where`` names the goldens file."""
        dims = tuple(dimensions)
        members = {
            case_id: {d: slice_values(field_or_none(fields, d), case_id, d, where) for d in dims}
            for case_id, fields in cases
        }
        return cls(dims, members)

    def slices(self) -> dict[SliceKey, tuple[str, ...]]:
        """Every slice and its case ids (file order), slices sorted by dimension order, value."""
        found: dict[SliceKey, list[str]] = {}
        for case_id, dims in self.members.items():
            for d in self.dimensions:
                for value in dims.get(d, ()):
                    found.setdefault(SliceKey(d, value), []).append(case_id)
        order = {d: i for i, d in enumerate(self.dimensions)}
        keys = sorted(found, key=lambda k: (order.get(k.dimension, len(order)), k.value))
        return {k: tuple(found[k]) for k in keys}

    def cases_of(self, key: SliceKey) -> tuple[str, ...]:
        """The case ids in one slice (file order); ``()`` for a slice no case is in."""
        return self.slices().get(key, ())

    def resolve(self, key: SliceKey) -> SliceKey | None:
        """The declared slice a ``slice:`` scope names, or None.  A bare value (no
        ``dimension=``) names the one dimension holding it; in two it is ambiguous."""
        known = self.slices()
        if key.dimension:
            return key if key in known else None
        matches = [k for k in known if k.value == key.value]
        return matches[0] if len(matches) == 1 else None

    def canonical(self) -> dict[str, Any]:
        return {
            "dimensions": list(self.dimensions),
            "cases": {
                cid: {d: list(v) for d, v in dims.items()} for cid, dims in self.members.items()
            },
        }

    def fingerprint(self) -> str:
        """SHA-256 of the dimensions and every case's values: moving one case changes it."""
        return sha256_json({"v": SLICE_FINGERPRINT_VERSION, **self.canonical()})

    def reassigned(self, other: SliceAssignment) -> tuple[str, ...]:
        """Cases in both whose slices differ (on the dimensions both declare), in this order."""
        shared = [d for d in self.dimensions if d in other.dimensions]
        out = []
        for case_id, dims in self.members.items():
            theirs = other.members.get(case_id)
            if theirs is None:
                continue
            if any(set(dims.get(d, ())) != set(theirs.get(d, ())) for d in shared):
                out.append(case_id)
        return tuple(out)
