"""Checks: what the gate enforces, read from YAML and refused at load when ambiguous.

Every rule of docs/checks.md is enforced when the file is read, so a config error
surfaces before a scored run has been paid for.  Metric names are *not* resolved here
(a plugin may register one later): only their spelling (``name`` or ``name@k``).
"""

from __future__ import annotations

import math
import numbers
import operator
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, Literal, Protocol, SupportsFloat, TypeVar

from evalkit._model.registry import split_spec
from evalkit._util import bounded as _bounded
from evalkit._util import yaml_values as _yaml_values
from evalkit._util.suggest import closest, did_you_mean
from evalkit._util.text import decode_utf8
from evalkit.errors import CheckError, MetricError

# "auto" (the default) is paired t: evalkit.stats.procedures.
from evalkit.stats.names import CORRECTIONS, Correction
from evalkit.stats.names import GATE_METHODS as METHODS
from evalkit.stats.names import GateMethod as Method

Op = Literal["<=", ">=", "=="]
Level = Literal["block", "warn"]
VsBaseline = Literal["no_significant_regression", "non_inferiority"]

LEVELS: Final = ("block", "warn")
VS_BASELINE: Final = ("no_significant_regression", "non_inferiority")
# 0.2.0's name for the allowed vs_baseline modes (it had only the first).
VS_BASELINE_MODES: Final = frozenset(VS_BASELINE)
DEFAULT_ALPHA: Final = 0.05
DEFAULT_METHOD: Final = "auto"

# The spec's fixed tolerance for "==": not configurable, on purpose.
EQ_REL_TOL: Final = 1e-9
EQ_ABS_TOL: Final = 1e-12
REL_TOL: Final = EQ_REL_TOL  # 0.2.0's names for the same two numbers
ABS_TOL: Final = EQ_ABS_TOL


def _equal(observed: float, threshold: float) -> bool:
    return math.isclose(observed, threshold, rel_tol=EQ_REL_TOL, abs_tol=EQ_ABS_TOL)


# op -> test; iterating gives the op strings.  ``<=``/``>=`` are exact: a
# tolerance around a line only moves the line somewhere undocumented.
OPS: Final[Mapping[str, Callable[[float, float], bool]]] = MappingProxyType(
    {"<=": operator.le, ">=": operator.ge, "==": _equal}
)

CHECK_KEYS: Final = (
    "id",
    "metric",
    "op",
    "threshold",
    "vs_baseline",
    "vs_reference",
    "alpha",
    "margin",
    "method",
    "level",
    "scope",
    "description",
    "per_slice",
    "slice",
    "min_effect",
)
FILE_KEYS: Final = ("checks", "correction", "require_baseline", "require_reference")

_KEY_ATTR = "_evalkit_check_key"

_SCOPE_FAILURE = (
    "A scoped check must evaluate every case it names — "
    "a floor checked on a subset is a floor that was not checked."
)


# The settings of a significance test, which a threshold check refuses: what each is for.
_NOT_ON_A_THRESHOLD: Final = {
    "alpha": "vs_baseline checks and vs_reference checks; a threshold check has no "
    "significance test to apply it to — remove alpha",
    "method": "vs_baseline and vs_reference checks — remove it",
    "margin": "'vs_baseline: non_inferiority' (or vs_reference) — remove it",
    "min_effect": "'vs_baseline: no_significant_regression' — remove it",
}


class HasCaseId(Protocol):
    """Any row that knows which case it came from (``QueryResult``, ``CaseResult``)."""

    @property
    def query_id(self) -> str: ...


RowT = TypeVar("RowT", bound=HasCaseId)


def _usable(row: object) -> bool:
    """A row with ``error`` set (a failed case) produced no result."""
    return getattr(row, "error", None) is None


def _listed(values: Iterable[str]) -> str:
    return ", ".join(repr(v) for v in values)


def compare(op: object, observed: object, threshold: object) -> bool:
    """Whether ``observed op threshold`` holds: the one rule every threshold check uses.

    ``<=``/``>=`` are exact, ``==`` uses the fixed :data:`OPS` tolerance (no argument: a
    per-check tolerance is a strictness dial).  0.2.0's ``compare(op, observed,
    threshold)`` order is accepted too.  An unknown op, a non-number or a NaN raises
    :class:`CheckError`: an undefined number can neither pass nor fail a line.
    """
    if isinstance(observed, str) and not isinstance(op, str):
        op, observed = observed, op
    if not isinstance(op, str) or op not in OPS:
        raise CheckError(f"unknown op {op!r}; allowed: {_listed(OPS)}")
    values = []
    for what, value in (("observed", observed), ("threshold", threshold)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise CheckError(f"{what} value must be a number, got {value!r}")
        number = float(value)
        if math.isnan(number):
            raise CheckError(f"{what} value is NaN; a check cannot be decided on it")
        values.append(number)
    return OPS[op](values[0], values[1])


@dataclass(frozen=True)
class CheckSpec:
    """One check, validated on construction (from a file or in code).

    Threshold checks carry ``op`` and ``threshold``; vs_baseline checks carry
    ``vs_baseline`` with ``alpha`` (default 0.05), ``method`` (default ``auto``: paired t)
    and, for ``non_inferiority``, ``margin``.  ``vs_reference`` takes the same settings
    against the pinned reference (a drift check, docs/drift.md).  ``scope`` is ``None``
    (every case) or a tuple of case ids; ``source`` (``file:line``) is not part of equality.
    """

    id: str
    metric: str
    op: Op | None = None
    threshold: float | None = None
    vs_baseline: VsBaseline | None = None
    alpha: float | None = None
    margin: float | None = None
    method: Method | None = None
    level: Level = "block"
    scope: tuple[str, ...] | None = None
    description: str | None = None
    source: str | None = field(default=None, compare=False)
    # Last, so 0.2.0's positional order above is unchanged.
    vs_reference: VsBaseline | None = None
    # Also compare slice by slice, failing on any slice that regresses after FDR control
    # (evalkit.gate.slices); and a scope given as one slice (``tags=billing``), which the
    # pipeline resolves to the slice's case ids (evalkit._spec.slices).
    per_slice: bool = False
    slice: str | None = None
    # no_significant_regression's practical-effect rule: fail only on a regression
    # significantly larger than this (docs/checks.md#min_effect).
    min_effect: float | None = None

    def __post_init__(self) -> None:
        ident: object = self.id
        if not isinstance(ident, str) or not ident.strip():
            raise CheckError(f"check id must be a non-empty string, got {ident!r}")
        self._check_metric()
        level: object = self.level
        if level not in LEVELS:
            raise self._error(f"unknown level {level!r}; allowed: {_listed(LEVELS)}", "level")
        description: object = self.description
        if description is not None and not isinstance(description, str):
            raise self._error("description must be text", "description")
        kinds = ("threshold", "vs_baseline", "vs_reference")
        declared = [key for key in kinds if getattr(self, key) is not None]
        if len(declared) > 1:
            raise self._error(
                f"declares both {' and '.join(declared)}; a check is either a threshold, a "
                "baseline comparison or a drift check against the reference, and gets one "
                "verdict — split it into separate checks"
            )
        if not declared:
            op_note = " (it has an op but no threshold)" if self.op is not None else ""
            raise self._error(
                f"declares neither threshold nor vs_baseline{op_note}, so it would gate "
                "nothing; add either 'op' + 'threshold', or "
                "'vs_baseline: no_significant_regression'"
            )
        if declared == ["threshold"]:
            self._check_threshold_kind()
        else:
            self._check_baseline_kind()
        self._check_scope()
        self._check_slices()

    def _check_slices(self) -> None:
        per_slice: object = self.per_slice
        if not isinstance(per_slice, bool):
            raise self._error(f"per_slice must be true or false, got {per_slice!r}", "per_slice")
        if per_slice and self.vs_baseline != "no_significant_regression":
            raise self._error(
                "per_slice applies to 'vs_baseline: no_significant_regression' checks only "
                "(a slice regresses significantly or does not; a threshold or a margin per "
                "slice is a scoped check: slice: NAME)",
                "per_slice",
            )
        name: object = self.slice
        if name is None:
            return
        if not isinstance(name, str) or not name.strip():
            raise self._error(
                f"slice must name one slice (tags=billing, or billing), got {name!r}", "slice"
            )
        if per_slice:
            raise self._error(
                "per_slice and slice together: a check scoped to one slice has one slice to "
                "compare; remove one",
                "per_slice",
            )

    def _error(self, problem: str, key: str | None = None) -> CheckError:
        error = CheckError(f"check {self.id!r}: {problem}")
        # The loader reads this to point the message at the key's own line.
        setattr(error, _KEY_ATTR, key)
        return error

    def _check_metric(self) -> None:
        metric: object = self.metric
        if not isinstance(metric, str) or not metric.strip():
            raise self._error(f"metric must be a non-empty metric name, got {metric!r}", "metric")
        try:
            split_spec(metric)
        except MetricError as exc:
            raise self._error(str(exc), "metric") from None

    def _number(self, key: str, value: object) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            shown = (
                f"text {value!r} (write it without quotes)"
                if isinstance(value, str)
                else f"{type(value).__name__} {value!r}"
            )
            raise self._error(f"{key} must be a number, got {shown}", key)
        number = float(value)
        if not math.isfinite(number):
            raise self._error(f"{key} must be a finite number, got {number!r}", key)
        return number

    def _positive(self, key: str, what: str = "") -> float:
        number = self._number(key, getattr(self, key))
        if number <= 0:
            raise self._error(f"{key} must be greater than 0{what}, got {number!r}", key)
        return number

    def _check_threshold_kind(self) -> None:
        object.__setattr__(self, "threshold", self._number("threshold", self.threshold))
        op: object = self.op
        if op is None:
            raise self._error(f"a threshold check needs 'op', one of {_listed(OPS)}")
        if op not in OPS:
            raise self._error(f"unknown op {op!r}; allowed: {_listed(OPS)}", "op")
        for key, applies in _NOT_ON_A_THRESHOLD.items():
            if getattr(self, key) is not None:
                raise self._error(f"{key} applies only to {applies}", key)

    def _check_baseline_kind(self) -> None:
        against = "vs_baseline" if self.vs_baseline is not None else "vs_reference"
        kind: object = self.mode
        if kind not in VS_BASELINE:
            raise self._error(
                f"unknown {against} {kind!r}; allowed: {_listed(VS_BASELINE)}"
                + (did_you_mean(kind, VS_BASELINE) if isinstance(kind, str) else ""),
                against,
            )
        if self.op is not None:
            raise self._error(
                f"op has no meaning on a {against} check (the metric's registered "
                "polarity decides which direction is a regression) — remove op",
                "op",
            )
        alpha = DEFAULT_ALPHA if self.alpha is None else self._number("alpha", self.alpha)
        if not 0.0 < alpha < 1.0:
            raise self._error(f"alpha must lie strictly between 0 and 1, got {alpha!r}", "alpha")
        object.__setattr__(self, "alpha", alpha)
        method: object = DEFAULT_METHOD if self.method is None else self.method
        if method not in METHODS:
            raise self._error(f"unknown method {method!r}; allowed: {_listed(METHODS)}", "method")
        object.__setattr__(self, "method", method)
        if kind == "non_inferiority":
            if self.margin is None:
                raise self._error(
                    f"'{against}: non_inferiority' needs 'margin' (the largest loss, in "
                    "the metric's units, that still counts as not worse)",
                    against,
                )
            object.__setattr__(self, "margin", self._positive("margin"))
        elif self.margin is not None:
            raise self._error(
                f"margin applies only to '{against}: non_inferiority' — remove it", "margin"
            )
        self._check_min_effect(kind)

    def _check_min_effect(self, kind: object) -> None:
        if self.min_effect is None:
            return
        if kind != "no_significant_regression":
            raise self._error(
                "min_effect applies only to no_significant_regression (non_inferiority "
                "already has its margin) — remove it",
                "min_effect",
            )
        effect = self._positive(
            "min_effect", " (the smallest regression worth failing on, in the metric's units)"
        )
        if self.per_slice:
            raise self._error(
                "min_effect and per_slice together are not supported: each slice is "
                "tested for any regression — remove one",
                "min_effect",
            )
        object.__setattr__(self, "min_effect", effect)

    def _check_scope(self) -> None:
        scope: object = self.scope
        if scope is None:
            return
        if isinstance(scope, str) or not isinstance(scope, list | tuple):
            raise self._error(
                f"scope must be a list of case ids, got {type(scope).__name__} {scope!r}", "scope"
            )
        if not scope:
            raise self._error(
                "scope is empty: an empty scope matches no case, so the check would "
                "evaluate nothing; list case ids or remove scope to cover every case",
                "scope",
            )
        seen: set[str] = set()
        for case_id in scope:
            if not isinstance(case_id, str) or not case_id.strip():
                raise self._error(
                    f"scope ids must be non-empty text (an empty case id), got {case_id!r}",
                    "scope",
                )
            if case_id in seen:
                raise self._error(
                    f"scope names case {case_id!r} twice (scope repeats {case_id}), so it "
                    "would be weighted twice",
                    "scope",
                )
            seen.add(case_id)
        object.__setattr__(self, "scope", tuple(scope))

    def validate_scope(self, known_case_ids: Iterable[str]) -> None:
        """Raise :class:`CheckError` if ``scope`` names a case not in ``known_case_ids``."""
        if self.scope is None:
            return
        known = set(known_case_ids)
        unknown = [cid for cid in self.scope if cid not in known]
        if not unknown:
            return
        matches = {cid: match for cid in unknown if (match := closest(cid, known)) is not None}
        if len(unknown) == 1 and matches:
            hint = f" (did you mean {matches[unknown[0]]!r}?)"
        elif matches:
            hint = " (did you mean: " + ", ".join(f"{a} -> {b}" for a, b in matches.items()) + ")"
        else:
            hint = ""
        raise self._error(
            f"scope names {len(unknown)} case(s) that do not exist: {', '.join(unknown)}{hint}"
        )

    @property
    def is_threshold(self) -> bool:
        return self.threshold is not None

    @property
    def is_vs_baseline(self) -> bool:
        return self.vs_baseline is not None

    @property
    def is_vs_reference(self) -> bool:
        """A drift check: compared with the pinned reference, not the latest baseline."""
        return self.vs_reference is not None

    @property
    def mode(self) -> VsBaseline | None:
        """The comparison mode, whichever side it compares with (None: a threshold)."""
        return self.vs_baseline if self.vs_baseline is not None else self.vs_reference

    @property
    def is_blocking(self) -> bool:
        return self.level == "block"

    # 0.2.0's names for two of them.
    is_baseline = is_vs_baseline
    blocking = is_blocking

    def describe(self) -> str:
        """One line naming the check, its condition, its scope and its level.

        ``recall_floor: recall@10 >= 0.6 [block]``,
        ``no_regression: ndcg@10 no_significant_regression (alpha=0.05) over 3 case(s) [warn]``.
        """
        if self.threshold is not None:
            condition = f"{self.metric} {self.op} {self.threshold:g}"
        else:
            settings = [f"alpha={self.alpha:g}"]
            if self.margin is not None:
                settings.append(f"margin={self.margin:g}")
            if self.min_effect is not None:
                settings.append(f"min_effect={self.min_effect:g}")
            if self.method not in (None, DEFAULT_METHOD):
                settings.append(f"method={self.method}")
            against = "" if self.vs_reference is None else "vs_reference "
            condition = f"{self.metric} {against}{self.mode} ({', '.join(settings)})"
        where = "" if self.scope is None else f" over {len(self.scope)} case(s)"
        if self.slice is not None:
            where = f" over slice {self.slice}" + (
                f" ({len(self.scope)} case(s))" if self.scope is not None else ""
            )
        if self.per_slice:
            where += ", per slice"
        return f"{self.id}: {condition}{where} [{self.level}]"

    def _index(self, rows: Sequence[RowT]) -> dict[str, RowT]:
        by_id: dict[str, RowT] = {}
        for row in rows:
            if row.query_id in by_id:
                raise self._error(
                    f"case {row.query_id!r} has more than one row; rows must be unique by case id"
                )
            by_id[row.query_id] = row
        return by_id

    def missing(self, rows: Sequence[RowT]) -> list[str]:
        """Ids this check covers that produced no usable row (absent, or ``error`` set).

        Scoped: scope ids in scope order.  Unscoped: ids of rows with an error.
        """
        return self._absent(self._index(rows))

    def _absent(self, by_id: Mapping[str, HasCaseId]) -> list[str]:
        if self.scope is None:
            return [cid for cid, row in by_id.items() if not _usable(row)]
        return [cid for cid in self.scope if cid not in by_id or not _usable(by_id[cid])]

    def select(self, rows: Sequence[RowT]) -> list[RowT]:
        """The rows this check evaluates.

        Unscoped: every usable row, in row order (rows whose ``error`` is set
        are left out, and :meth:`coverage` shows how many); a run with no rows
        at all raises.  Scoped: the row of every scoped case, in run order; a
        scoped case without a usable row raises :class:`CheckError`, because
        evaluating the survivors would report the same pass as a full one.
        """
        by_id = self._index(rows)
        if self.scope is None:
            if not by_id:
                raise self._error(
                    "the run has no cases, so this check would pass without evaluating anything"
                )
            return [row for row in by_id.values() if _usable(row)]
        absent = self._absent(by_id)
        if absent:
            shown = ", ".join(absent[:20]) + (
                f" (+{len(absent) - 20} more)" if len(absent) > 20 else ""
            )
            raise self._error(
                f"scoped to {len(self.scope)} case(s) but {len(absent)} produced no result: "
                f"{shown}. {_SCOPE_FAILURE}"
            )
        wanted = set(self.scope)
        return [row for row in by_id.values() if row.query_id in wanted]

    def coverage_counts(self, rows: Sequence[RowT]) -> tuple[int, int]:
        """``(k, n)``: cases evaluated with a usable row, out of the cases the check covers.

        Scoped: ``n`` is the scope size.  Unscoped: ``n`` is the number of rows
        in the run (failed cases included), so a run where cases errored shows
        ``98/100`` rather than a clean-looking ``98/98``.
        """
        by_id = self._index(rows)
        n = len(by_id) if self.scope is None else len(self.scope)
        return n - len(self._absent(by_id)), n

    def coverage(self, rows: Sequence[RowT]) -> str:
        """``"k/n cases"`` — report it beside every verdict."""
        k, n = self.coverage_counts(rows)
        return f"{k}/{n} cases"

    def compare(self, observed: SupportsFloat) -> bool:
        """Whether ``observed`` satisfies a threshold check, by :func:`compare`'s rule."""
        if self.threshold is None or self.op is None:
            raise self._error(
                "compare() applies to threshold checks; this is a vs_baseline check, "
                "decided by the paired comparison with the baseline"
            )
        value: object = observed
        if isinstance(value, float) and math.isnan(value):
            raise self._error(
                f"observed {self.metric} is NaN; a check cannot be decided on an undefined number"
            )
        try:
            return compare(self.op, value, self.threshold)
        except CheckError as exc:
            raise self._error(str(exc)) from None


@dataclass(frozen=True)
class ChecksFile:
    """A whole checks file: the checks plus file-wide settings.

    ``correction`` (``none`` | ``holm`` | ``maxt``) adjusts vs_baseline (and
    vs_reference) p-values for testing several checks at once, as one family;
    ``require_baseline`` makes a missing baseline block instead of reporting
    ``no-baseline``, ``require_reference`` makes a missing or expired reference
    block (it is reported as ``no-reference`` either way, never as a pass).
    """

    checks: tuple[CheckSpec, ...]
    correction: Correction = "none"
    require_baseline: bool = False
    source: str | None = field(default=None, compare=False)
    require_reference: bool = False

    def __post_init__(self) -> None:
        where = f"{self.source}: " if self.source else ""
        checks = tuple(self.checks)
        if not checks:
            raise CheckError(f"{where}zero checks declared; a gate with no checks gates nothing")
        seen: set[str] = set()
        for check in checks:
            if not isinstance(check, CheckSpec):
                raise CheckError(f"{where}checks must be CheckSpec objects, got {check!r}")
            if check.id in seen:
                raise CheckError(f"{where}duplicate check id {check.id!r}; ids must be unique")
            seen.add(check.id)
        object.__setattr__(self, "checks", checks)
        problem = _setting_problem(self.correction, self.require_baseline, self.require_reference)
        if problem:
            raise CheckError(f"{where}{problem[1]}")

    def __iter__(self) -> Iterator[CheckSpec]:
        return iter(self.checks)

    def __len__(self) -> int:
        return len(self.checks)

    def ids(self) -> list[str]:
        return [check.id for check in self.checks]

    def get(self, check_id: str) -> CheckSpec:
        for check in self.checks:
            if check.id == check_id:
                return check
        raise CheckError(f"no check {check_id!r}; checks: {', '.join(self.ids())}")


def load_checks(
    path: str | os.PathLike[str], *, known_case_ids: Iterable[str] | None = None
) -> list[CheckSpec]:
    """Read and validate a checks file; see :func:`load_checks_file` for file-wide settings."""
    return list(load_checks_file(path, known_case_ids=known_case_ids).checks)


def load_checks_file(
    path: str | os.PathLike[str], *, known_case_ids: Iterable[str] | None = None
) -> ChecksFile:
    """Read a checks YAML file: ``checks:`` plus optional ``correction``, ``require_baseline``
    and ``require_reference``.

    With ``known_case_ids`` (e.g. ``goldens.ids()``), a scope naming an
    unknown case raises here, before anything is run.
    """
    from evalkit._util import yaml_files as _yaml  # PyYAML only when a YAML file is read

    file = Path(path)
    source = str(file)
    try:
        data = _bounded.read_bytes(file)
    except FileNotFoundError:
        raise CheckError(f"checks file not found: {file}") from None
    except OSError as exc:
        raise CheckError(f"cannot read checks file {file}: {exc.strerror or exc}") from None
    text = decode_utf8(data, source, CheckError)
    doc = _yaml.parse(text, source, CheckError)
    return _build_file(doc.data, doc.node, source, known_case_ids)


def checks_from_data(
    data: Any, *, source: str = "<checks>", known_case_ids: Iterable[str] | None = None
) -> ChecksFile:
    """Validate already-parsed data (e.g. a ``checks:`` block inside another config)."""
    return _build_file(data, None, source, known_case_ids)


def _build_file(
    data: Any, node: Any, source: str, known_case_ids: Iterable[str] | None
) -> ChecksFile:
    from evalkit._util import yaml_files as _yaml  # PyYAML only when a YAML file is read

    if data is None:
        raise CheckError(f"{source}: the checks file is empty; it loads zero checks (0 checks)")
    # 0.2.0 also read a bare list of checks, with no file-wide settings.
    bare = isinstance(data, list)
    if bare:
        data = {"checks": data}
    if not isinstance(data, Mapping):
        raise CheckError(
            f"{_at(source, _yaml.line_of(node))}expected a mapping with a 'checks:' list "
            f"(or a bare list of checks), got {type(data).__name__}"
        )
    nodes = _yaml.mapping_value_nodes(node)
    for key in data:
        if key not in FILE_KEYS:
            raise CheckError(
                f"{_key_at(source, node, key, None)}unknown top-level key {key!r}"
                f"{did_you_mean(str(key), FILE_KEYS)}; allowed: {_listed(FILE_KEYS)}"
            )
    raw_checks = data.get("checks")
    checks_node = node if bare else nodes.get("checks", (None, None))[1]
    if raw_checks is None or raw_checks == []:
        raise CheckError(
            f"{_at(source, _yaml.line_of(checks_node))}zero checks declared (loaded 0 "
            "checks); a gate with no checks gates nothing"
        )
    if not isinstance(raw_checks, list):
        raise CheckError(
            f"{_at(source, _yaml.line_of(checks_node))}'checks' must be a list of checks, "
            f"got {type(raw_checks).__name__}"
        )
    item_nodes = _yaml.sequence_items(checks_node)
    known = None if known_case_ids is None else set(known_case_ids)
    specs: list[CheckSpec] = []
    first_line: dict[str, str] = {}
    for index, raw in enumerate(raw_checks):
        item = item_nodes[index] if index < len(item_nodes) else None
        line = _yaml.line_of(item)
        spec = _build_check(raw, index, item, source, line)
        where = f"line {line}" if line is not None else f"check #{index + 1}"
        if spec.id in first_line:
            raise CheckError(
                f"{_at(source, line)}duplicate check id {spec.id!r} "
                f"(first at {first_line[spec.id]}); ids must be unique"
            )
        first_line[spec.id] = where
        if known is not None:
            try:
                spec.validate_scope(known)
            except CheckError as exc:
                raise CheckError(f"{_key_at(source, item, 'scope', line)}{exc}") from None
        specs.append(spec)
    correction = _yaml_values.plain(data.get("correction", "none"))
    require = data.get("require_baseline", False)
    require_reference = data.get("require_reference", False)
    problem = _setting_problem(correction, require, require_reference)
    if problem:
        raise CheckError(f"{_key_at(source, node, problem[0], None)}{problem[1]}")
    return ChecksFile(
        tuple(specs), correction, require, source=source, require_reference=require_reference
    )


def _setting_problem(correction: object, *required: object) -> tuple[str, str] | None:
    """The first file-wide setting that is not allowed: ``(its key, the problem)``; after
    ``correction`` come ``require_baseline`` and ``require_reference``."""
    if correction not in CORRECTIONS:
        hint = did_you_mean(correction, CORRECTIONS) if isinstance(correction, str) else ""
        return "correction", (
            f"unknown correction {correction!r}{hint}; allowed: {_listed(CORRECTIONS)}"
        )
    for key, value in zip(("require_baseline", "require_reference"), required, strict=True):
        if not isinstance(value, bool):
            return key, f"{key} must be true or false, got {value!r}"
    return None


def _at(source: str, line: int | None) -> str:
    return f"{source}:{line}: " if line is not None else f"{source}: "


def _key_at(source: str, item: Any, key: object, line: int | None) -> str:
    """``file:line: `` of ``key`` in the mapping ``item`` (``line`` if unknown)."""
    from evalkit._util import yaml_files as _yaml  # PyYAML only when a YAML file is read

    nodes = _yaml.mapping_value_nodes(item)
    return _at(source, (_yaml.line_of(nodes[key][0]) if key in nodes else None) or line)


def _build_check(raw: Any, index: int, item: Any, source: str, line: int | None) -> CheckSpec:
    at = _at(source, line)
    if not isinstance(raw, Mapping):
        raise CheckError(
            f"{at}check #{index + 1} must be a mapping with 'id' and 'metric', "
            f"got {type(raw).__name__}"
        )
    label = f"check #{index + 1}"
    if raw.get("id") is not None:
        try:
            check_id = _yaml_values.as_text(raw["id"])
        except ValueError as exc:
            raise CheckError(f"{at}{label}: id must be text: {exc}") from None
        label = f"check {check_id!r}"
    else:
        raise CheckError(f"{at}{label} has no 'id'; give every check a unique id")
    for key in raw:
        if key not in CHECK_KEYS:
            raise CheckError(
                f"{_key_at(source, item, str(key), line)}{label}: unknown key {key!r}"
                f"{did_you_mean(str(key), CHECK_KEYS)}; allowed: {_listed(CHECK_KEYS)}"
            )
    if raw.get("metric") is None:
        raise CheckError(f"{at}{label} has no 'metric'; name the metric it gates")
    scope = raw.get("scope")
    if "scope" in raw and scope is None:
        raise CheckError(
            f"{_key_at(source, item, 'scope', line)}{label}: scope is empty; list case ids, "
            "or remove scope to cover every case"
        )
    if "scope" in raw and "slice" in raw:
        raise CheckError(
            f"{_key_at(source, item, 'slice', line)}{label}: scope and slice together: give "
            "the case ids or the slice, not both"
        )
    if isinstance(scope, list):
        try:
            scope = [_yaml_values.as_text(case_id) for case_id in scope]
        except ValueError as exc:
            raise CheckError(
                f"{_key_at(source, item, 'scope', line)}{label}: scope id must be text: {exc}"
            ) from None
    values = {k: _yaml_values.plain(v) for k, v in raw.items() if k not in ("id", "scope")}
    declared_at = f"{source}:{line}" if line is not None else source
    try:
        return CheckSpec(id=check_id, scope=scope, source=declared_at, **values)
    except CheckError as exc:
        key = getattr(exc, _KEY_ATTR, None)
        raise CheckError(f"{_key_at(source, item, key, line) if key else at}{exc}") from None
