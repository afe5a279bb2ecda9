"""Clusters: which cases share a document, a conversation or a template (issue 46)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from evalkit._model.digest import sha256_json
from evalkit._model.slices import field_or_none
from evalkit.errors import GoldenError

CLUSTER_FINGERPRINT_VERSION: Final = "1"


def cluster_label(value: Any, case_id: str, name: str, where: str) -> str | None:
    """A case's cluster from its field value: text, an integer or a boolean, read as
    written; ``None`` when the case has no value (it is then its own cluster).  Anything
    else is refused naming the case: a case is in one cluster, and a float or a mapping
    as a label would be a guess at what was meant."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | str):
        text = str(value).strip()
        if text:
            return text
        raise GoldenError(
            f"{where}: case {case_id!r}: cluster field {name!r} is empty; fill it in or "
            "remove it (a case without it is its own cluster)"
        )
    kind = "a list" if isinstance(value, list | tuple) else type(value).__name__
    raise GoldenError(
        f"{where}: case {case_id!r}: cluster field {name!r} must be one text or integer "
        f"(the case's document, conversation or template), got {kind} {value!r}"
    )


@dataclass(frozen=True)
class ClusterAssignment:
    """Each case's cluster under the declared field (``None``: the case has none).

    ``members`` holds every case of the goldens, in file order.
    """

    field_name: str
    members: Mapping[str, str | None] = field(default_factory=dict)

    @classmethod
    def of(
        cls, cases: Iterable[tuple[str, Mapping[str, Any]]], name: str, where: str
    ) -> ClusterAssignment:
        """The assignment of ``(case id, fields)`` pairs; ``where`` names the goldens file."""
        members = {
            case_id: cluster_label(field_or_none(fields, name), case_id, name, where)
            for case_id, fields in cases
        }
        return cls(name, members)

    def canonical(self) -> dict[str, Any]:
        return {"field": self.field_name, "cases": dict(self.members)}

    def fingerprint(self) -> str:
        """SHA-256 of the field and every case's cluster: moving one case changes it."""
        return sha256_json({"v": CLUSTER_FINGERPRINT_VERSION, **self.canonical()})

    def reassigned(self, other: ClusterAssignment) -> tuple[str, ...]:
        """Cases in both whose cluster differs (or whose field does), in this order."""
        if other.field_name != self.field_name:
            return tuple(case_id for case_id in self.members if case_id in other.members)
        return tuple(
            case_id
            for case_id, label in self.members.items()
            if case_id in other.members and other.members[case_id] != label
        )
