"""One registry for every metric name, on both evaluation paths."""

from __future__ import annotations

import hashlib
import inspect
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, runtime_checkable

from evalkit._model.builtin_hook import ensure as _ensure_builtins
from evalkit._model.metric_identity import (
    Params,
    ParamValue,
    canonical_params,
    params_json,
    signature_parameters,
)
from evalkit._util.suggest import did_you_mean
from evalkit.errors import MetricError, NoRelevantIdsError, RegistryError, UnknownMetricError

if TYPE_CHECKING:
    from evalkit._model.golden_cases import GoldenCase, GoldenSet
    from evalkit._model.results import Row, TargetResponse

MetricKind = Literal["case", "aggregate"]
RetrievalFn = Callable[[Sequence[str], Any, int], float]
CaseFn = Callable[["TargetResponse", "GoldenCase"], float]
CaseMetricFn = CaseFn  # 0.2.0's name
AggregateFn = Callable[[Sequence["Row"]], float]


@runtime_checkable
class CountsSomeCases(Protocol):
    """An aggregate computed on some of the rows it is given (e.g. the human-graded ones)."""

    counted: str

    def cases_counted(self, rows: Sequence[Row]) -> int: ...


LoaderFn = Callable[[Path], "GoldenSet"]
F = TypeVar("F", bound=Callable[..., Any])
# The values a metric can take, lowest and highest (an open end is infinite).  Not part
# of the fingerprint: declaring a range says what a value can be, not what it means.
Bounds = tuple[float, float]
UNIT: Bounds = (0.0, 1.0)
NON_NEGATIVE: Bounds = (0.0, math.inf)

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*(@[1-9][0-9]*)?$")

# trec_eval's uncut measures, by the names IR users type: the family over the whole
# ranking.  A depth no ranking reaches makes family@k equal to them (map_cut_k is map
# once k covers the ranking; ndcg_cut_k is ndcg once k also covers every relevant id).
FULL_DEPTH: Mapping[str, str] = {"map": "map", "ndcg": "ndcg", "recip_rank": "mrr", "mrr": "mrr"}
FULL_DEPTH_K = 2**62
_FAMILY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")


@dataclass(frozen=True)
class MetricDef:
    """Everything the registry knows about one concrete metric name."""

    name: str
    kind: MetricKind
    fn: Callable[..., float]
    higher_is_better: bool | None
    version: str | None  # None: fingerprinted by what the code does
    builtin: bool = False
    family: str | None = None
    k: int | None = None
    # The parameters this definition can be tuned by (name -> default), and the
    # values of this instance (canonical: sorted, defaults left out).  See
    # evalkit._model.metric_identity: both are part of the metric's identity.
    parameters: Mapping[str, ParamValue] = field(default_factory=dict)
    params: Params = ()
    # The range every value lies in, when declared (every built-in declares one);
    # None: not checked.
    bounds: Bounds | None = None

    def admits(self, value: float) -> bool:
        """True when ``value`` lies in the declared range (or none is declared)."""
        return self.bounds is None or self.bounds[0] <= value <= self.bounds[1]

    def __call__(self, *args: Any) -> float:
        """Compute the metric, so ``get_metric(name)(response, case)`` works as in 0.2.0."""
        return self.fn(*args)

    @property
    def fingerprint(self) -> str:
        """A short hash that changes when the metric's definition changes (what goes in:
        docs/design/code-notes.md)."""
        fn, builtin, version = _definition(self)
        identity = f"builtin:v{version}" if builtin else _code_identity(fn, version)
        return _hash_identity(self, identity)


@dataclass(frozen=True)
class RetrievalFamily:
    """A ``runner.METRICS`` entry: ``fn(retrieved, relevant, k) -> float``."""

    name: str
    fn: RetrievalFn
    higher_is_better: bool | None
    version: str | None  # None: fingerprinted by what the code does
    builtin: bool = False
    # Built-in families beyond the spec's recall/ndcg: the spec shows clients adding
    # their own `METRICS["precision"] = ...`, so such a name yields to the client's.
    replaceable: bool = False
    # Parameters that change a value (name -> default); None: the function's
    # keyword-only defaults (evalkit._model.metric_identity.signature_parameters).
    parameters: Mapping[str, ParamValue] | None = None
    bounds: Bounds | None = None

    def declared_parameters(self) -> Mapping[str, ParamValue]:
        if self.parameters is not None:
            return self.parameters
        return signature_parameters(self.fn)


def _code_identity(fn: Callable[..., Any], version: str | None) -> str:
    """What a client metric's fingerprint hashes besides its name, kind and direction."""
    explicit = getattr(fn, "fingerprint", None)
    if isinstance(explicit, str):
        return "attr:" + explicit + ("" if version is None else f"|declared:v{version}")
    if version is not None:
        return f"declared:v{version}"
    from evalkit._model.code_identity import SCHEME, code_hash

    return f"{SCHEME}:{code_hash(fn)}"


def _definition(defn: MetricDef) -> tuple[Callable[..., Any], bool, str | None]:
    """The function, built-in flag and version that define ``defn`` (its family's, if any)."""
    if defn.family is not None:
        fam = _families.get(defn.family)
        if fam is not None:
            return fam.fn, fam.builtin, fam.version
    return defn.fn, defn.builtin, defn.version


def _hash_identity(defn: MetricDef, identity: str) -> str:
    payload = f"{defn.name}|{defn.kind}|{defn.higher_is_better}|{identity}"
    if defn.params:  # the default instance keeps the fingerprint it always had
        payload += f"|params:{params_json(defn.params)}"
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def source_text_fingerprint(defn: MetricDef) -> str:
    """The fingerprint artefact schema 1 stored (of the source *text*), so the reader can
    tell a schema-1 fingerprint still describes today's definition."""
    fn, builtin, version = _definition(defn)
    if builtin:
        return _hash_identity(defn, f"builtin:v{version}")
    explicit = getattr(fn, "fingerprint", None)
    if isinstance(explicit, str):
        text = "attr:" + explicit
    else:
        from evalkit._model.code_identity import source_or_name

        is_code = inspect.isfunction(fn) or inspect.ismethod(fn)
        text = source_or_name(fn if is_code else type(fn))
    return _hash_identity(defn, f"v{version or '1'}:{text}")


_case: dict[str, MetricDef] = {}
_aggregate: dict[str, MetricDef] = {}
_families: dict[str, RetrievalFamily] = {}
_loaders: dict[str, LoaderFn] = {}
_TABLES: tuple[dict[str, Any], ...] = (_case, _aggregate, _families, _loaders)


def _check_polarity(name: str, higher_is_better: object) -> bool:
    if not isinstance(higher_is_better, bool):
        raise RegistryError(
            f"metric {name!r}: higher_is_better must be True or False, got {higher_is_better!r}"
        )
    return higher_is_better


def _version(version: object) -> str | None:
    if version is None:
        return None
    if isinstance(version, bool) or not isinstance(version, str | int) or str(version) == "":
        raise RegistryError(
            f"metric version must be a non-empty string such as '2', got {version!r}"
        )
    return str(version)


def check_bounds(name: str, bounds: object) -> Bounds | None:
    """``bounds`` as ``(low, high)`` floats: a pair of numbers (``None`` for an open end)
    with ``low <= high``; ``None`` declares no range."""
    if bounds is None:
        return None
    ends = tuple(bounds) if isinstance(bounds, tuple | list) else ()
    numbers = len(ends) == 2 and all(
        end is None or (isinstance(end, int | float) and not isinstance(end, bool)) for end in ends
    )
    if numbers:
        low = -math.inf if ends[0] is None else float(ends[0])
        high = math.inf if ends[1] is None else float(ends[1])
        if low <= high:  # False for a NaN end too
            return low, high
    raise RegistryError(
        f"metric {name!r}: bounds must be (low, high) with low <= high, None for an "
        f"open end, e.g. (0, 1) or (0, None); got {bounds!r}"
    )


def bounds_text(bounds: Bounds) -> str:
    """``[0, 1]``, ``>= 0`` or ``<= 5``: a declared range as a message shows it."""
    low, high = bounds
    if math.isinf(high):
        return f">= {low:g}"
    if math.isinf(low):
        return f"<= {high:g}"
    return f"[{low:g}, {high:g}]"


def _check_name(name: object) -> str:
    if name == "":
        raise RegistryError("invalid metric name '': a metric name must be a non-empty string")
    if not isinstance(name, str) or not _NAME.match(name):
        raise RegistryError(
            f"invalid metric name {name!r}: use letters, digits, '_', '-', '.', "
            "optionally followed by '@k' with k a positive integer"
        )
    return name


def split_spec(spec: str) -> tuple[str, int | None]:
    """Split ``"recall@10"`` into ``("recall", 10)``; a bare name gives ``(name, None)``.

    Raises :class:`MetricError` for a malformed string such as ``"recall@"`` or
    ``"recall@0"``.
    """
    if not isinstance(spec, str) or not spec:
        raise MetricError(f"metric spec must be a non-empty string, got {spec!r}")
    base, sep, k_text = spec.partition("@")
    if not sep:
        return spec, None
    if not base or not _FAMILY.match(base):
        raise MetricError(f"malformed metric spec {spec!r}: expected 'name@k', e.g. 'recall@10'")
    if not k_text.isdigit() or int(k_text) < 1:
        raise MetricError(
            f"malformed metric spec {spec!r}: k must be a positive integer, e.g. '{base}@10'"
        )
    return base, int(k_text)


def _claimed(name: str) -> str | None:
    """Say what already owns ``name`` (or a family that covers it), if anything."""
    _ensure_builtins()
    if name in _case:
        return "a per-case metric"
    if name in _aggregate:
        return "an aggregate"
    base, _, _ = name.partition("@")
    if base in _families and "@" in name:
        return f"covered by the retrieval family {base!r}"
    return None


def define(defn: MetricDef) -> None:
    """Register a fully described metric (used for built-ins, which carry versions)."""
    owner = _claimed(defn.name)
    if owner is not None:
        other_kind = "an aggregate" if defn.kind == "case" else "a per-case metric"
        both = (
            "; a name may be a per-case metric or an aggregate, not both"
            if owner == other_kind
            else ""
        )
        raise RegistryError(
            f"metric {defn.name!r} is already registered ({owner}){both}; "
            "a name means one thing: pick another name"
        )
    (_case if defn.kind == "case" else _aggregate)[defn.name] = defn


def register_metric(
    name: str,
    *,
    higher_is_better: bool,
    version: str | None = None,
    bounds: tuple[float | None, float | None] | None = None,
) -> Callable[[F], F]:
    """Register a per-case metric ``(TargetResponse, GoldenCase) -> float``.

    ``higher_is_better`` decides which direction of change is a regression; a duplicate
    name raises :class:`RegistryError`.  ``version`` is the fingerprint (bump it when the
    formula changes; without it the code is hashed, :mod:`evalkit._model.code_identity`).
    ``bounds`` (``(0, 1)``; ``None`` for an open end) is the range every value lies in: a
    value outside it stops the run and an artefact row holding one is refused.
    """
    return _registrar(name, "case", higher_is_better, version, bounds)


def register_aggregate(
    name: str,
    *,
    higher_is_better: bool,
    version: str | None = None,
    bounds: tuple[float | None, float | None] | None = None,
) -> Callable[[F], F]:
    """Register a whole-run metric ``(Sequence[CaseResult]) -> float`` (``bounds``: as
    :func:`register_metric`'s, declared for the reader)."""
    return _registrar(name, "aggregate", higher_is_better, version, bounds)


def _registrar(
    name: str,
    kind: MetricKind,
    higher_is_better: bool,
    version: str | None,
    bounds: tuple[float | None, float | None] | None,
) -> Callable[[F], F]:
    """The checks and decorator :func:`register_metric` and :func:`register_aggregate` share."""
    _check_name(name)
    hib = _check_polarity(name, higher_is_better)
    declared = _version(version)
    declared_bounds = check_bounds(name, bounds)
    noun = "metric" if kind == "case" else "aggregate"

    def decorate(fn: F) -> F:
        if not callable(fn):
            raise RegistryError(f"{noun} {name!r}: expected a callable, got {fn!r}")
        define(MetricDef(name, kind, fn, hib, declared, bounds=declared_bounds))
        return fn

    return decorate


def register_family(
    name: str,
    fn: RetrievalFn,
    *,
    higher_is_better: bool | None,
    version: str | None = None,
    builtin: bool = False,
    replaceable: bool = False,
    parameters: Mapping[str, ParamValue] | None = None,
    bounds: tuple[float | None, float | None] | None = None,
) -> None:
    """Register a retrieval family that claims every ``name@k``.

    ``parameters`` (name -> default; by default ``fn``'s keyword-only defaults) are part
    of each instance's fingerprint; ``bounds`` as :func:`register_metric`'s.  The same
    function again is a no-op, another one raises (replacing a built-in and
    ``higher_is_better=None``: docs/design/code-notes.md).
    """
    _ensure_builtins()
    if not isinstance(name, str) or not _FAMILY.match(name):
        raise RegistryError(
            f"invalid retrieval family name {name!r}: use letters, digits, '_', '-', '.' (no '@')"
        )
    if not callable(fn):
        raise RegistryError(f"retrieval family {name!r}: expected a callable, got {fn!r}")
    if higher_is_better is not None:
        _check_polarity(name, higher_is_better)
    if builtin and version is None:
        version = "1"  # built-ins always carry the version their fingerprint hashes
    declared_bounds = check_bounds(name, bounds)
    existing = _families.get(name)
    new = RetrievalFamily(
        name,
        fn,
        higher_is_better,
        _version(version),
        builtin,
        replaceable,
        parameters,
        declared_bounds,
    )
    if existing is not None and existing.replaceable and existing.fn is not fn:
        _families[name] = replace(new, builtin=False, replaceable=False)
        return
    if existing is not None:
        if existing.fn is fn:
            if existing.higher_is_better is None and higher_is_better is not None:
                _families[name] = replace(existing, higher_is_better=higher_is_better)
                return
            if higher_is_better is None or existing.higher_is_better == higher_is_better:
                return
        raise RegistryError(
            f"retrieval family {name!r} is already registered with a different "
            "definition; a name means one thing: pick another name"
        )
    clash = [n for n in (*_case, *_aggregate) if n == name or n.partition("@")[0] == name]
    if clash:
        raise RegistryError(
            f"retrieval family {name!r} would claim {clash[0]!r}, which is already registered"
        )
    _families[name] = new


def _family_metric(family: RetrievalFamily, k: int, relevance_level: int = 1) -> MetricDef:
    def score(response: TargetResponse, case: GoldenCase) -> float:
        # Grades when the golden carries them (a set means grade 1); the
        # relevance module hands set-only formulas the ids graded >= 1.
        from evalkit._model.relevance import call_retrieval_fn

        judged = case.grades or case.relevant
        if not judged:
            # A zero here would read as a system that found nothing relevant.
            raise NoRelevantIdsError(
                f"case {case.id!r}: {family.name}@{k} needs relevant ids, and this case "
                "lists none (give it `relevant`, or score it with a text metric)"
            )
        return call_retrieval_fn(
            family.fn, response.ranked_ids, judged, k, relevance_level=relevance_level
        )

    score.__qualname__ = f"{family.name}@{k}"
    return MetricDef(
        name=f"{family.name}@{k}",
        kind="case",
        fn=score,
        higher_is_better=family.higher_is_better,
        version=family.version,
        builtin=family.builtin,
        family=family.name,
        k=k,
        parameters=dict(family.declared_parameters()),
        bounds=family.bounds,
    )


def family_instance(name: str, spec: str, params: Mapping[str, object]) -> MetricDef:
    """``spec`` (``ndcg@10``) scored with ``params`` (``relevance_level``), named ``name``:
    an evalkit.yaml ``{name, kind: ndcg@10, relevance_level: 2}`` entry."""
    _ensure_builtins()
    from evalkit._model.relevance import check_level

    base, k = split_spec(spec)
    family = _families.get(base)
    full = _full_depth(spec) if k is None else None
    if full is not None:
        family, k = full
    if k is None or family is None:
        raise MetricError(
            f"{spec!r} is not a retrieval metric (family@k); known families: "
            f"{', '.join(sorted(_families)) or '(none)'}"
        )
    unknown = sorted(set(params) - {"relevance_level"})
    if unknown:
        raise MetricError(f"{spec} takes one parameter, relevance_level; got {unknown[0]!r}")
    canonical = canonical_params(spec, params, dict(family.declared_parameters()))
    defn = _family_metric(family, k, check_level(params.get("relevance_level", 1)))
    return replace(defn, name=_check_name(name), params=canonical)


def register_concrete_family_metric(family: str, k: int) -> MetricDef:
    """List ``family@k`` in :func:`registered` (the family must exist)."""
    _ensure_builtins()
    fam = _families[family]
    defn = _family_metric(fam, k)
    for table, owner in ((_case, "a per-case metric"), (_aggregate, "an aggregate")):
        if defn.name in table:
            raise RegistryError(f"metric {defn.name!r} is already registered ({owner})")
    _case[defn.name] = defn
    return defn


def _full_depth(name: str) -> tuple[RetrievalFamily, int] | None:
    """The family and depth a trec_eval name (``map``, ``recip_rank``...) stands for."""
    _ensure_builtins()
    family = _families.get(FULL_DEPTH.get(name, ""))
    return None if family is None else (family, FULL_DEPTH_K)


def known_names() -> list[str]:
    """Every usable name: concrete metrics, aggregates, ``family@k`` patterns, and
    trec_eval's full-depth names."""
    _ensure_builtins()
    full = (n for n in FULL_DEPTH if _full_depth(n) is not None)
    return sorted({*_case, *_aggregate, *(f"{f}@k" for f in _families), *full})


def get_metric(name: str) -> MetricDef:
    """Resolve a concrete name (``"ndcg@10"``, ``"latency_p95"``) to its definition."""
    _ensure_builtins()
    if not isinstance(name, str):
        raise MetricError(f"metric name must be a string, got {name!r}")
    found = _case.get(name) or _aggregate.get(name)
    if found is not None:
        return found
    base, k = split_spec(name)
    if k is not None and base in _families:
        return _family_metric(_families[base], k)
    full = _full_depth(name)
    if full is not None:
        return replace(_family_metric(*full), name=name)
    close = [
        *_case,
        *_aggregate,
        *(f"{f}@{k}" for f in _families if k is not None),
        *(n for n in FULL_DEPTH if k is None and _full_depth(n) is not None),
    ]
    raise UnknownMetricError(
        f"unknown metric {name!r}{did_you_mean(name, close)}; "
        f"known: {', '.join(known_names()) or '(none registered)'}. "
        "Register it with register_metric/register_aggregate, or import the plugin that does"
    )


def metric_instance(
    name: str, params: Mapping[str, object] | None = None, *, only_declared: bool = False
) -> MetricDef:
    """``name`` with parameter values: the definition whose fingerprint covers them.

    Unknown parameters raise :class:`MetricError` naming the metric's declared
    ones; with ``only_declared`` they are ignored instead (one run-wide setting
    such as ``relevance_level`` applies only to the metrics that take it).
    """
    defn = get_metric(name)
    given = dict(params or {})
    if only_declared:
        given = {k: v for k, v in given.items() if k in defn.parameters}
    canonical = canonical_params(name, given, defn.parameters)
    return replace(defn, params=canonical) if canonical else defn


def get_aggregate(name: str) -> MetricDef:
    """Resolve the name of a whole-run aggregate; a per-case name raises."""
    defn = get_metric(name)
    if defn.kind != "aggregate":
        raise RegistryError(f"{name!r} is a per-case metric, not an aggregate")
    return defn


def resolve(name: str) -> Callable[..., float]:
    """0.2.0's lookup across both namespaces: the registered function itself."""
    return get_metric(name).fn


def is_aggregate(name: str) -> bool:
    """True when ``name`` is a whole-run aggregate (resolving it first)."""
    return get_metric(name).kind == "aggregate"


def polarity(name: str) -> bool:
    """``True`` when higher values of ``name`` are better; unknown names raise."""
    defn = get_metric(name)
    if defn.higher_is_better is None:
        raise MetricError(
            f"metric {name!r} has no declared direction (it was added through "
            "runner.METRICS); register it with register_retrieval_metric(..., "
            "higher_is_better=...) before gating on it"
        )
    return defn.higher_is_better


class Registered(list[str]):
    """The sorted concrete metric and aggregate names, also readable as 0.2.0's snapshot.

    As a list it is what ``registered()`` always returned here; indexed by
    ``"metrics"``, ``"aggregates"`` or ``"loaders"`` (or compared with a dict) it
    is 0.2.0's ``{"metrics": [...], "aggregates": [...], "loaders": [...]}``.
    """

    def __init__(self, by_kind: Mapping[str, list[str]]) -> None:
        super().__init__(sorted({*by_kind["metrics"], *by_kind["aggregates"]}))
        self._by_kind = {kind: list(names) for kind, names in by_kind.items()}

    def as_dict(self) -> dict[str, list[str]]:
        return {kind: list(names) for kind, names in self._by_kind.items()}

    def keys(self) -> list[str]:
        return list(self._by_kind)

    def __getitem__(self, key: Any) -> Any:
        return self.as_dict()[key] if isinstance(key, str) else super().__getitem__(key)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self.as_dict() == dict(other)
        return super().__eq__(other)

    __hash__ = None


def registered() -> Registered:
    """The registered concrete metric and aggregate names, sorted (see :class:`Registered`)."""
    _ensure_builtins("metrics", "loaders")
    return Registered(
        {
            "metrics": sorted(_case),
            "aggregates": sorted(_aggregate),
            "loaders": sorted(_loaders),
        }
    )


def families() -> Mapping[str, RetrievalFamily]:
    """Read-only view of the retrieval families (``runner.METRICS``)."""
    _ensure_builtins()
    return _families


def register_loader(extension: str) -> Callable[[F], F]:
    """Register a golden-set loader ``(Path) -> GoldenSet`` for a file extension."""
    _ensure_builtins("loaders")
    if not isinstance(extension, str) or not extension.strip(". "):
        raise RegistryError(f"loader extension must be a non-empty string, got {extension!r}")
    ext = extension.lower().lstrip(".")

    def decorate(fn: F) -> F:
        if ext in _loaders:
            raise RegistryError(f"a golden loader for {ext!r} files is already registered")
        if not callable(fn):
            raise RegistryError(f"loader {ext!r}: expected a callable, got {fn!r}")
        _loaders[ext] = fn
        return fn

    return decorate


def get_loader(extension: str) -> LoaderFn | None:
    """The loader registered for ``extension`` (without the dot), if any."""
    _ensure_builtins("loaders")
    return _loaders.get(extension.lower().lstrip("."))


def loader_extensions() -> list[str]:
    _ensure_builtins("loaders")
    return sorted(_loaders)


@contextmanager
def isolated() -> Iterator[None]:
    """Undo every registration made inside the block (for tests and notebooks)."""
    _ensure_builtins("metrics", "loaders")
    saved = [dict(table) for table in _TABLES]
    try:
        yield
    finally:
        for table, before in zip(_TABLES, saved, strict=True):
            table.clear()
            table.update(before)


# 0.2.0's private table names, which its test suites copy, reset and restore (the
# families sit behind _POLARITY, the fourth table they save).  New code: isolated().
_METRICS = _case
_AGGREGATES = _aggregate
_LOADERS = _loaders
_POLARITY = _families


def _reset_for_tests() -> None:
    """Clear every registration, built-ins included (test-only; see :func:`isolated`)."""
    _ensure_builtins("metrics", "loaders")
    for table in _TABLES:
        table.clear()


def resolve_query_metrics(specs: Sequence[str]) -> list[MetricDef]:
    """Resolve per-query metric specs; unknown, malformed, aggregate or repeated names raise."""
    if isinstance(specs, str):
        raise MetricError(f"metrics must be a list of spec strings, e.g. [{specs!r}], not a str")
    if not specs:
        raise MetricError("metrics: name at least one metric, e.g. ['ndcg@10']")
    resolved: list[MetricDef] = []
    for spec in specs:
        try:
            split_spec(spec)
            defn = get_metric(spec)
        except UnknownMetricError:
            raise UnknownMetricError(
                f"unknown metric {spec!r}; known: {', '.join(known_names())}"
            ) from None
        except MetricError as exc:
            raise MetricError(f"{exc}; known: {', '.join(known_names())}") from None
        if defn.kind == "aggregate":
            raise MetricError(
                f"{spec!r} is a whole-run aggregate, not a per-query metric: "
                f"compute it from the rows with result.aggregate({spec!r})"
            )
        resolved.append(defn)
    if len({d.name for d in resolved}) != len(resolved):
        raise MetricError(f"metrics list names a metric twice: {list(specs)}")
    return resolved


def resolve_metrics(metrics: Sequence[str]) -> tuple[list[MetricDef], list[str]]:
    """Split metric names into per-case definitions and aggregate names; unknown raises."""
    if isinstance(metrics, str):
        raise MetricError(f"metrics must be a list of names, e.g. [{metrics!r}], not a str")
    case_defs: list[MetricDef] = []
    aggregates: list[str] = []
    seen: set[str] = set()
    for name in metrics:
        if name in seen:
            raise MetricError(f"metric {name!r} is listed twice")
        seen.add(name)
        defn = get_metric(name)
        if defn.kind == "aggregate":
            aggregates.append(name)
        else:
            case_defs.append(defn)
    return case_defs, aggregates
