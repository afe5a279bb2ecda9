"""Answer metrics: per-case scores of a text answer, each an object with explicit parameters."""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from evalkit._model.digest import sha256_json
from evalkit._model.metric_identity import ParamValue, canonical_params
from evalkit._model.registry import (
    NON_NEGATIVE,
    UNIT,
    Bounds,
    MetricDef,
    define,
    get_metric,
    register_metric,
)
from evalkit._util import bounded as _bounded
from evalkit._util.suggest import did_you_mean
from evalkit.errors import MetricError
from evalkit.metrics.answer_keys import (
    MUST_INCLUDE_KEY,
    MUST_NOT_INCLUDE_KEY,
    answer_text,
    phrase_list,
    reference_answers,
)
from evalkit.metrics.answer_text import Normalisation, normalizer, tokens_f1

if TYPE_CHECKING:
    from evalkit._model.golden_cases import GoldenCase
    from evalkit._model.results import TargetResponse

__all__ = [
    "AnswerLength",
    "AnswerMetric",
    "ContainsAll",
    "ContainsAny",
    "ContainsPhrases",
    "ExactMatch",
    "ExcludesPhrases",
    "JsonSchemaMatch",
    "JsonValid",
    "RegexMatch",
    "TokenF1",
    "build_answer_metric",
    "check_declaration",
    "register_answer_builtins",
    "register_answer_metric",
]

_REGEX_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}


class AnswerMetric:
    """A per-case metric ``metric(response, case) -> float`` over the answer text."""

    kind: ClassVar[str]
    higher_is_better: ClassVar[bool]
    version: ClassVar[str] = "1"
    # Every kind but a length scores a share or a yes/no: a value in [0, 1].
    bounds: ClassVar[Bounds] = UNIT

    def params(self) -> dict[str, Any]:
        """The parameters that define this instance (JSON data)."""
        return {}

    @property
    def definition(self) -> str:
        """Canonical text of the metric and its parameters: ``token_f1(normalisation='squad')``."""
        args = ", ".join(f"{k}={v!r}" for k, v in sorted(self.params().items()))
        return f"{self.kind}({args})"

    @property
    def fingerprint(self) -> str:
        """Hash of kind, version and parameters (the registry reads this attribute)."""
        payload = {"kind": self.kind, "version": self.version, "params": self.params()}
        return sha256_json(payload, compact=False)[:16]

    def score(self, text: str, case: GoldenCase) -> float:
        raise NotImplementedError

    def __call__(self, response: TargetResponse, case: GoldenCase) -> float:
        return self.score(answer_text(response, case, self.kind), case)

    def __repr__(self) -> str:
        return self.definition

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AnswerMetric) and self.fingerprint == other.fingerprint

    def __hash__(self) -> int:
        return hash(self.fingerprint)


class _Normalised(AnswerMetric):
    def __init__(self, normalisation: Normalisation = "squad") -> None:
        self._norm = normalizer(normalisation, self.kind)
        self.normalisation = normalisation

    def params(self) -> dict[str, Any]:
        return {"normalisation": self.normalisation}


class ExactMatch(_Normalised):
    """1.0 when the normalised answer equals any normalised reference."""

    kind = "exact_match"
    higher_is_better = True

    def score(self, text: str, case: GoldenCase) -> float:
        answer = self._norm(text)
        refs = reference_answers(case, self.kind)
        return 1.0 if any(answer == self._norm(ref) for ref in refs) else 0.0


class TokenF1(_Normalised):
    """The best token F1 of the answer over the references (SQuAD v1.1)."""

    kind = "token_f1"
    higher_is_better = True

    def score(self, text: str, case: GoldenCase) -> float:
        tokens = self._norm(text).split()
        refs = reference_answers(case, self.kind)
        return max(tokens_f1(tokens, self._norm(ref).split()) for ref in refs)


class _Phrases(_Normalised):
    """Shared parameters of the phrase metrics: fixed phrases and/or a per-case key."""

    case_key: ClassVar[str]

    def __init__(
        self, phrases: Sequence[str] | None = None, *, normalisation: Normalisation = "lower"
    ) -> None:
        super().__init__(normalisation)
        if phrases is not None and (
            isinstance(phrases, str) or not all(isinstance(p, str) and p.strip() for p in phrases)
        ):
            raise MetricError(
                f"{self.kind}: phrases must be a list of non-empty strings, got {phrases!r}"
            )
        self.phrases: tuple[str, ...] | None = None if phrases is None else tuple(phrases)

    def params(self) -> dict[str, Any]:
        phrases = None if self.phrases is None else list(self.phrases)
        return {**super().params(), "phrases": phrases, "case_key": self.case_key}

    def _found(self, text: str, case: GoldenCase) -> list[bool]:
        per_case = phrase_list(case, self.case_key)
        if per_case is None and self.phrases is None:
            raise MetricError(
                f"{self.kind}: case {case.id!r} has no '{self.case_key}' list; give it one "
                f"(an empty list [] if it requires nothing), or give the metric phrases="
            )
        wanted = [*(self.phrases or ()), *(per_case or ())]
        haystack = self._norm(text)
        return [self._norm(phrase) in haystack for phrase in wanted]


class ContainsPhrases(_Phrases):
    """1.0 when the answer contains all (``contains_all``) or any (``contains_any``)
    of the required phrases.
    """

    case_key = MUST_INCLUDE_KEY
    higher_is_better = True
    need_all: ClassVar[bool]

    def score(self, text: str, case: GoldenCase) -> float:
        found = self._found(text, case)
        hit = all(found) if self.need_all else any(found)
        return 1.0 if hit else 0.0


class ContainsAll(ContainsPhrases):
    """1.0 when every required phrase occurs in the answer."""

    kind = "contains_all"
    need_all = True


class ContainsAny(ContainsPhrases):
    """1.0 when at least one required phrase occurs in the answer."""

    kind = "contains_any"
    need_all = False


class ExcludesPhrases(_Phrases):
    """1.0 when none of the forbidden phrases occurs in the answer."""

    kind = "excludes_forbidden"
    case_key = MUST_NOT_INCLUDE_KEY
    higher_is_better = True

    def score(self, text: str, case: GoldenCase) -> float:
        return 0.0 if any(self._found(text, case)) else 1.0


class RegexMatch(AnswerMetric):
    """1.0 when the regular expression matches the answer (``search`` or ``fullmatch``)."""

    kind = "regex_match"
    higher_is_better = True

    def __init__(
        self, pattern: str, *, flags: str = "", mode: Literal["search", "fullmatch"] = "search"
    ) -> None:
        if not isinstance(pattern, str) or not pattern:
            raise MetricError(f"regex_match: pattern must be a non-empty string, got {pattern!r}")
        if not isinstance(flags, str) or set(flags) - set(_REGEX_FLAGS):
            raise MetricError(
                f"regex_match: flags must be letters from {''.join(_REGEX_FLAGS)}, got {flags!r}"
            )
        if mode not in ("search", "fullmatch"):
            raise MetricError(f"regex_match: mode must be 'search' or 'fullmatch', got {mode!r}")
        try:
            compiled = re.compile(pattern, sum(_REGEX_FLAGS[letter] for letter in set(flags)))
        except re.error as exc:
            where = f" at position {exc.pos}" if exc.pos is not None else ""
            raise MetricError(
                f"regex_match: invalid regular expression {pattern!r}: {exc.msg}{where}"
            ) from None
        self.pattern = pattern
        self.flags = "".join(sorted(set(flags)))
        self.mode = mode
        self._match: Callable[[str], object] = (
            compiled.search if mode == "search" else compiled.fullmatch
        )

    def params(self) -> dict[str, Any]:
        return {"pattern": self.pattern, "flags": self.flags, "mode": self.mode}

    def score(self, text: str, case: GoldenCase) -> float:  # noqa: ARG002
        return 1.0 if self._match(text) is not None else 0.0


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_json(text: str) -> tuple[bool, Any]:
    """``(True, value)`` when ``text`` is one strict JSON document (no NaN/Infinity)."""
    try:
        return True, json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        return False, None


class JsonValid(AnswerMetric):
    """1.0 when the whole answer (surrounding whitespace aside) is one JSON document."""

    kind = "json_valid"
    higher_is_better = True

    def score(self, text: str, case: GoldenCase) -> float:  # noqa: ARG002
        return 1.0 if _parse_json(text)[0] else 0.0


class JsonSchemaMatch(AnswerMetric):
    """1.0 when the answer is JSON that conforms to a JSON Schema; invalid JSON scores 0."""

    kind = "json_schema"
    higher_is_better = True

    def __init__(
        self,
        schema: Mapping[str, Any] | None = None,
        *,
        schema_path: str | Path | None = None,
    ) -> None:
        if (schema is None) == (schema_path is None):
            raise MetricError("json_schema: give exactly one of schema= or schema_path=")
        self.schema_path = None if schema_path is None else str(schema_path)
        where = self.schema_path or "schema"
        loaded: object = schema if schema is not None else _read_schema(Path(str(schema_path)))
        if not isinstance(loaded, Mapping):
            raise MetricError(
                f"json_schema: {where}: a schema must be a JSON object, got {type(loaded).__name__}"
            )
        self.schema: dict[str, Any] = dict(loaded)
        self._validator = _schema_validator(self.schema, where)

    def params(self) -> dict[str, Any]:
        return {"schema_sha256": sha256_json(self.schema, compact=False)}

    @property
    def definition(self) -> str:
        shown = f"schema_path={self.schema_path!r}, " if self.schema_path else ""
        return f"{self.kind}({shown}schema_sha256={self.params()['schema_sha256'][:12]!r})"

    def score(self, text: str, case: GoldenCase) -> float:  # noqa: ARG002
        ok, value = _parse_json(text)
        if not ok:
            return 0.0
        from referencing.exceptions import Unresolvable

        try:
            return 1.0 if self._validator.is_valid(value) else 0.0
        except Unresolvable as exc:  # a $ref load could not see (e.g. under a nested $id)
            raise MetricError(_unresolvable(self.schema_path or "schema", exc)) from None


def _unresolvable(where: str, exc: Exception) -> str:
    return (
        f"json_schema: {where}: a $ref does not resolve ({type(exc).__name__}: {exc}); "
        "evalkit never fetches schemas: define it in the schema (e.g. under $defs)"
    )


def _objects(node: object) -> Iterator[Mapping[str, Any]]:
    """Every JSON object in ``node``, itself included."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _check_refs(schema: dict[str, Any], cls: Any, where: str) -> None:
    """Resolve every ``$ref`` now, so a dangling or remote one is refused at load, not mid-run."""
    below = [v for k, v in schema.items() if k != "$id"]
    if any("$id" in o or isinstance(o.get("id"), str) for o in _objects(below)):
        return  # a nested $id moves the base; leave those refs to the validator
    from referencing.exceptions import Unresolvable

    # The validator's own resolver (its registry knows the metaschemas, fetches nothing).
    resolver = getattr(cls(schema), "_resolver", None)
    if resolver is None:  # another jsonschema version: the run-time check still applies
        return
    for ref in (o["$ref"] for o in _objects(schema) if isinstance(o.get("$ref"), str)):
        try:
            resolver.lookup(ref)
        except Unresolvable as exc:
            raise MetricError(_unresolvable(where, exc)) from None


def _read_schema(path: Path) -> object:
    try:
        text = _bounded.read_text(path, encoding="utf-8")
    except FileNotFoundError:
        raise MetricError(
            f"json_schema: schema file not found: {path}; fix schema_path (a path relative "
            "to the config's folder) or create the file"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise MetricError(f"json_schema: cannot read schema file {path}: {exc}") from None
    try:
        return _bounded.loads(text)
    except json.JSONDecodeError as exc:
        raise MetricError(
            f"{path}:{exc.lineno}:{exc.colno}: invalid JSON in the schema: {exc.msg}"
        ) from None


def _schema_validator(schema: dict[str, Any], where: str) -> Any:
    try:
        import jsonschema
        from jsonschema import validators
    except ImportError:
        raise MetricError(
            "json_schema needs the jsonschema package: pip install 'paired-evalkit[jsonschema]'"
        ) from None
    cls = validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        pointer = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        first_line = str(exc.message).splitlines()[0]
        raise MetricError(
            f"json_schema: {where}: not a valid JSON Schema at {pointer}: {first_line}"
        ) from None
    _check_refs(schema, cls, where)
    return cls(schema)


class AnswerLength(AnswerMetric):
    """The answer's length in words (whitespace-separated) or characters."""

    kind = "answer_length"
    higher_is_better = False
    bounds = NON_NEGATIVE

    def __init__(self, unit: Literal["words", "chars"] = "words") -> None:
        if unit not in ("words", "chars"):
            raise MetricError(f"answer_length: unit must be 'words' or 'chars', got {unit!r}")
        self.unit = unit

    def params(self) -> dict[str, Any]:
        return {"unit": self.unit}

    def score(self, text: str, case: GoldenCase) -> float:  # noqa: ARG002
        return float(len(text.split()) if self.unit == "words" else len(text))


# ------------------------------------------------------------------ building and registering

# The kinds that take no required parameter are also registered under their own names.
_PARAMETER_FREE: tuple[type[AnswerMetric], ...] = (
    ExactMatch,
    TokenF1,
    ContainsAll,
    ContainsAny,
    ExcludesPhrases,
    JsonValid,
    AnswerLength,
)
_WITH_PARAMETERS: tuple[type[AnswerMetric], ...] = (RegexMatch, JsonSchemaMatch)
_KINDS: dict[str, Callable[..., AnswerMetric]] = {
    cls.kind: cls for cls in (*_PARAMETER_FREE, *_WITH_PARAMETERS)
}


def build_answer_metric(kind: str, params: Mapping[str, Any], where: str = "") -> AnswerMetric:
    """Make an answer metric from its canonical name and parameters (a config entry)."""
    prefix = f"{where}: " if where else ""
    factory = _KINDS.get(kind)
    if factory is None:
        raise MetricError(
            f"{prefix}unknown answer metric kind {kind!r}; known: {', '.join(sorted(_KINDS))}"
        )
    _check_parameter_names(kind, params, prefix)
    try:
        return factory(**dict(params))
    except TypeError as exc:
        raise MetricError(f"{prefix}{kind}: bad parameters {sorted(params)}: {exc}") from None
    except MetricError as exc:
        raise MetricError(f"{prefix}{exc}") from None


def _check_parameter_names(kind: str, params: Mapping[str, Any], prefix: str) -> None:
    """Refuse an unknown or a missing parameter by name, with the fix (not Python's wording)."""
    accepted = {
        name: p
        for name, p in inspect.signature(_KINDS[kind]).parameters.items()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }
    takes = ", ".join(sorted(accepted)) or "no parameters"
    for name in params:
        if name not in accepted:
            raise MetricError(
                f"{prefix}{kind}: unknown parameter {name!r}{did_you_mean(name, accepted)}; "
                f"{kind} takes {takes}"
            )
    missing = [n for n, p in accepted.items() if p.default is p.empty and n not in params]
    if missing:
        raise MetricError(f"{prefix}{kind}: missing parameter {missing[0]!r}; {kind} takes {takes}")


def check_declaration(entry: Mapping[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """Validate a config entry ``{name, kind, **params}``; return its parts."""
    name, kind = entry.get("name"), entry.get("kind")
    if not isinstance(name, str) or not name.strip():
        raise MetricError(f"a declared metric needs a 'name' (text), got {name!r}")
    if not isinstance(kind, str) or kind not in _KINDS:
        raise MetricError(
            f"metric {name!r}: 'kind' must be one of {', '.join(sorted(_KINDS))}, or a "
            f"retrieval metric such as recall@10 (with relevance_level), got {kind!r}"
        )
    params = {k: v for k, v in entry.items() if k not in ("name", "kind")}
    if "schema_path" in params:  # the file is read when the metric is built
        _check_parameter_names(kind, params, f"metric {name!r}: ")
    else:
        build_answer_metric(kind, params, f"metric {name!r}")
    return name, kind, params


def register_answer_metric(name: str, metric: AnswerMetric) -> MetricDef:
    """Register ``metric`` as the per-case metric ``name``, with its own polarity."""
    if not isinstance(metric, AnswerMetric):
        raise MetricError(f"register_answer_metric: expected an AnswerMetric, got {metric!r}")
    # A client metric (not builtin=True): its identity is its fingerprint, not a version.
    defaults = _default_params(metric)
    params = canonical_params(name, metric.params(), defaults)
    register_metric(name, higher_is_better=metric.higher_is_better)  # checks name and polarity
    # The default instance declares no parameters: it keeps the definition it always had.
    declared = defaults if params else {}
    hib, version = metric.higher_is_better, metric.version
    defn = MetricDef(name, "case", metric, hib, version, parameters=declared, params=params)
    define(replace(defn, bounds=metric.bounds))
    return get_metric(name)


def _default_params(metric: AnswerMetric) -> dict[str, ParamValue]:
    """The parameters of the kind's default instance; ``None`` for a required one."""
    declared: dict[str, ParamValue] = dict.fromkeys(metric.params())
    try:
        default = type(metric)()
    except (TypeError, MetricError):  # a required parameter (pattern, schema)
        return declared
    frozen = canonical_params(metric.kind, default.params(), declared)
    return {**declared, **dict(frozen)}


def register_answer_builtins() -> None:
    """Register the parameter-free answer metrics under their canonical names."""
    for cls in _PARAMETER_FREE:
        register_answer_metric(cls.kind, cls())
