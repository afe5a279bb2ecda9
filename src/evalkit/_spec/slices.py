"""Declaring slices and clusters: the config's ``slices:`` dimensions and ``clusters:``
field checked against the goldens at load.  A field no case carries is a typo, never "no
case is in a slice": it is refused with the config's line and the closest field there is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from evalkit._model.golden_cases import GoldenSet
from evalkit._model.slices import parse_slice_key
from evalkit._spec.checks import ChecksFile, CheckSpec
from evalkit._util.suggest import did_you_mean
from evalkit.errors import CheckError, ConfigError, GoldenError


def _fields(context: Mapping[str, Any], prefix: str = "") -> Iterable[str]:
    for key, value in context.items():
        name = f"{prefix}{key}"
        yield name
        if isinstance(value, Mapping):
            yield from _fields(value, f"{name}.")


def require_fields(goldens: GoldenSet, names: Iterable[str], where: str, key: str) -> None:
    """Raise :class:`ConfigError` (``where``: the config's ``file:line`` of ``key``) for the
    first of ``names`` no case of ``goldens`` carries, with the closest field they do."""
    present: set[str] = set()
    for case in goldens:
        present.update(_fields(case.context))
    source = goldens.source or "the goldens"
    for name in names:
        if name not in present:
            known = ", ".join(sorted(present)[:12]) or "none"
            raise ConfigError(
                f"{where}: {key}: no case in {source} has a field {name!r}"
                f"{did_you_mean(name, sorted(present))} (the cases' fields: {known})"
            )


def declare_slices(goldens: GoldenSet, dimensions: Iterable[str], where: str) -> GoldenSet:
    """``goldens`` with ``dimensions`` declared as slices; ``where`` is the config's
    ``file:line`` of ``slices:``.  Raises :class:`ConfigError` for a dimension no case
    has, :class:`GoldenError` (naming the case) for a value that cannot label a slice."""
    dims = list(dimensions)
    if not dims:
        return goldens
    require_fields(goldens, dims, where, "slices")
    return _labelled(lambda: goldens.with_slices(dims), f"a slice dimension at {where}")


def declare_clusters(goldens: GoldenSet, name: str | None, where: str) -> GoldenSet:
    """``goldens`` with ``name`` declared as the cluster field; ``where`` is the config's
    ``file:line`` of ``clusters:``.  Raises as :func:`declare_slices` does."""
    if name is None:
        return goldens
    require_fields(goldens, [name], where, "clusters")
    return _labelled(lambda: goldens.with_clusters(name), f"the cluster field at {where}")


def _labelled(declare: Callable[[], GoldenSet], declared_as: str) -> GoldenSet:
    """``declare()``; the case a value cannot label is named, and where it was declared."""
    try:
        return declare()
    except GoldenError as exc:
        raise GoldenError(f"{exc} (declared as {declared_as})") from None


def resolve_slice_checks(checks: ChecksFile, goldens: GoldenSet, config: str) -> ChecksFile:
    """The checks with every ``slice:`` scope turned into the slice's case ids.

    Refused with the check's line: a slice no case is in (with the closest slice the
    goldens have), a bare value two dimensions share, and ``per_slice``/``slice`` when
    ``config`` (the evalkit.yaml path) declares no slices.
    """
    assignment = goldens.slice_assignment()
    out: list[CheckSpec] = []
    for spec in checks.checks:
        at = spec.source or checks.source or "checks"
        if (spec.per_slice or spec.slice is not None) and assignment is None:
            key = "per_slice" if spec.per_slice else "slice"
            raise CheckError(
                f"{at}: check {spec.id!r}: {key} needs slice dimensions: declare them in "
                f"{config} (slices: [tags])"
            )
        if spec.slice is None or assignment is None:
            out.append(spec)
            continue
        wanted = parse_slice_key(spec.slice)
        found = assignment.resolve(wanted)
        if found is None:
            known = [str(k) for k in assignment.slices()]
            shared = [k for k in known if k.endswith(f"={wanted.value}")]
            if not wanted.dimension and len(shared) > 1:
                raise CheckError(
                    f"{at}: check {spec.id!r}: slice {spec.slice!r} is a value of several "
                    f"dimensions ({', '.join(shared)}); name one as DIMENSION=VALUE"
                )
            values = [k.split("=", 1)[1] for k in known]
            hint = did_you_mean(spec.slice, known if wanted.dimension else values)
            raise CheckError(
                f"{at}: check {spec.id!r}: no case of {goldens.source or 'the goldens'} is in "
                f"slice {spec.slice!r}{hint} (slices: {', '.join(known[:12]) or 'none'})"
            )
        out.append(replace(spec, scope=assignment.cases_of(found), slice=str(found)))
    return replace(checks, checks=tuple(out))
