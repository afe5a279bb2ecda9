"""``evalkit.yaml``: one file that tells the gate where everything is.

Validated with pydantic; unknown keys are refused with their key path and the
line they are on.  Relative paths resolve against the config file's folder.
``${NAME}`` in the HTTP target's url, headers and payload is expanded from the
environment when the target is built (so ``evalkit show`` needs no secrets).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from evalkit._spec.metric_entries import MetricEntry
from evalkit._util import bounded as _bounded
from evalkit._util import yaml_files as _yaml
from evalkit._util import yaml_values as _yaml_values
from evalkit._util.limits import MAX_CONCURRENCY, MAX_RESAMPLES
from evalkit._util.suggest import closest, did_you_mean
from evalkit._util.text import decode_utf8
from evalkit.errors import ConfigError

# A config's name is part of file names and of the PR comment's marker: keep it plain.
_CONFIG_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def validate_config_name(name: str) -> str:
    """A config name is used in file names and comment markers: keep it plain."""
    if not _CONFIG_NAME.match(name):
        raise ConfigError(
            f"config name {name!r} must be 1-100 characters of letters, digits, '.', '_' or "
            "'-', starting with a letter or digit; set the config-name input"
        )
    return name


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HttpTargetConfig(_Strict):
    url: str
    method: Literal["POST", "GET"] = "POST"
    headers: dict[str, str] = Field(default_factory=dict)
    payload: Any = Field(default_factory=lambda: {"query": "{{query}}"})
    extract: str
    timeout_s: float = Field(default=30.0, gt=0, allow_inf_nan=False)
    meta_keys: list[str] = Field(default_factory=list)
    # Total seconds to spend waiting out 429 Retry-After replies (0: a 429 fails).
    rate_limit_wait_s: float = Field(default=0.0, ge=0, allow_inf_nan=False)

    @field_validator("extract")
    @classmethod
    def _jmespath(cls, value: str) -> str:
        import jmespath
        from jmespath.exceptions import JMESPathError

        try:
            jmespath.compile(value)
        except JMESPathError as exc:
            raise ValueError(f"invalid JMESPath expression {value!r}: {exc}") from None
        return value


class TargetConfig(_Strict):
    name: str | None = None
    description: str | None = None
    python: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    http: HttpTargetConfig | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> TargetConfig:
        if (self.python is None) == (self.http is None):
            raise ValueError("give exactly one of 'python' (\"pkg.module:factory\") or 'http'")
        if self.python is not None and not re.fullmatch(r"[\w.]+:[\w.]+", self.python):
            raise ValueError(f"python must look like 'pkg.module:factory', got {self.python!r}")
        if self.http is not None and self.args:
            raise ValueError("'args' applies to a python target only")
        return self


# Judge settings that only the OpenAI-compatible wire understands (refused on anthropic).
OPENAI_ONLY = ("base_url", "api_key_env", "api_version", "token_limit_key")
# What the judge builder (metrics/judge_providers.py) takes besides the common settings.
WIRE_SETTINGS = (*OPENAI_ONLY, "rate_limit_wait_s")


_Price = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class JudgeConfig(_Strict):
    metric: str
    model: str = Field(min_length=1)
    rubric: str | None = None
    rubric_file: str | None = None
    scale: int = Field(default=5, ge=2, strict=True)
    higher_is_better: bool = Field(default=True, strict=True)
    cache_path: str | None = ".evalkit/judge-cache.json"
    # USD per million tokens, {"input": …, "output": …}: adds cost to each row's meta.
    prices: dict[Annotated[str, Field(pattern="^(input|output)$")], _Price] | None = None
    # "openai": any OpenAI-compatible chat completions server (metrics/judge_providers.py).
    provider: Literal["anthropic", "openai"] = "anthropic"
    base_url: str | None = None
    api_key_env: str | None = None
    api_version: str | None = None
    rate_limit_wait_s: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    # The request field of the token limit (openai only); left out: "auto", which moves to
    # max_completion_tokens once when the server refuses max_tokens (reasoning models).
    token_limit_key: Literal["auto", "max_tokens", "max_completion_tokens"] | None = None

    @model_validator(mode="after")
    def _one_rubric(self) -> JudgeConfig:
        if (self.rubric is None) == (self.rubric_file is None):
            raise ValueError("give exactly one of 'rubric' or 'rubric_file'")
        if self.provider == "anthropic":
            wire = [key for key in OPENAI_ONLY if getattr(self, key) is not None]
            if wire:
                raise ValueError(f"{wire[0]} applies to provider 'openai' only")
        return self


BaselineStoreName = Literal["artifact", "branch", "file", "none"]
DEFAULT_ARTIFACT_NAME = "evalkit-baseline"
DEFAULT_BASELINE_BRANCH = "evalkit-baselines"


class BaselineConfig(_Strict):
    """Where baselines live. The one place their defaults are decided (CLI and Action).

    ``store`` left out means ``file`` when a ``path`` is given, else ``artifact`` (what the
    GitHub Action keeps by default; the CLI cannot read it and says so).
    """

    store: BaselineStoreName | None = None
    path: str | None = None
    name: str = Field(default=DEFAULT_ARTIFACT_NAME, min_length=1)
    branch: str = Field(default=DEFAULT_BASELINE_BRANCH, min_length=1)
    # Keep only the newest N promotions in the history (file and branch stores); left
    # out, every promotion is kept. The pinned reference is a copy and always stays.
    keep_promotions: int | None = Field(default=None, ge=1, strict=True)
    # Branches whose pushes promote baselines besides the default branch, as names or
    # fnmatch patterns (release/*); a PR gates against its base branch's baselines when
    # that branch promotes (docs/baselines-per-branch.md).
    promote_branches: list[str] = Field(default_factory=list)

    @field_validator("promote_branches")
    @classmethod
    def _branch_patterns(cls, value: list[str]) -> list[str]:
        for pattern in value:
            if not pattern.strip() or pattern != pattern.strip():
                raise ValueError(
                    f"promote_branches holds {pattern!r}: each entry is a branch name or a "
                    "pattern like release/*, without surrounding spaces"
                )
        return value

    def promotes(self, branch: str, default_branch: str) -> bool:
        """Whether pushes to ``branch`` promote baselines: the default branch always does."""
        from evalkit._util.branches import branch_promotes

        return branch_promotes(branch, default_branch, self.promote_branches)

    @model_validator(mode="after")
    def _path_for_file(self) -> BaselineConfig:
        if self.store == "file" and self.path is None:
            raise ValueError("store 'file' needs a 'path' to the baseline artefact")
        if self.promote_branches and self.kind == "branch":
            raise ValueError(
                "promote_branches needs store: artifact; the branch store keeps the default "
                "branch's baselines only"
            )
        if self.keep_promotions is not None and self.kind not in ("file", "branch"):
            raise ValueError(
                f"keep_promotions bounds the history of the file and branch stores; the "
                f"{self.kind} store keeps none of its own (Actions artifacts expire with their "
                "retention): drop keep_promotions, or use store: branch"
            )
        return self

    @property
    def kind(self) -> BaselineStoreName:
        """The store in effect (``store``, or the default for what is given)."""
        if self.store is not None:
            return self.store
        return "file" if self.path is not None else "artifact"


#: Below this many paired cases a slice is reported as too small and not tested: the
#: smallest n from which the default procedure holds its level (docs/calibration.md).
DEFAULT_SLICE_MIN_CASES = 30
DEFAULT_SLICE_FDR = 0.05


def _label_field(name: str, what: str, reserved: str) -> None:
    """Refuse a label field (slice dimension, cluster) that is no field name or that
    defines a case (``reserved`` ends the message)."""
    from evalkit._model.slices import RESERVED_FIELDS

    if not name.strip() or any(not part for part in name.split(".")):
        raise ValueError(f"{what} {name!r} is not a field name")
    if name in RESERVED_FIELDS:
        raise ValueError(f"{name!r} defines a case and {reserved}")


def _listed_once(value: list[str], what: str) -> list[str]:
    dupes = sorted({item for item in value if value.count(item) > 1})
    if dupes:
        raise ValueError(f"{what} listed more than once: {', '.join(dupes)}")
    return value


class SlicesConfig(_Strict):
    """``slices:``: the slice dimensions, and how per-slice checks control false discoveries.

    ``slices: [tags, lang]`` is short for ``slices: {by: [tags, lang]}``; ``fdr`` is the
    false-discovery rate q, ``method`` ``auto`` (Benjamini-Hochberg when no case is in two
    tests, else Benjamini-Yekutieli), ``bh`` or ``by`` (evalkit.stats.fdr).
    """

    by: list[str] = Field(default_factory=list)
    fdr: float = Field(default=DEFAULT_SLICE_FDR, gt=0, le=0.5, allow_inf_nan=False)
    method: Literal["auto", "bh", "by"] = "auto"
    min_cases: int = Field(default=DEFAULT_SLICE_MIN_CASES, ge=2, strict=True)

    @field_validator("by")
    @classmethod
    def _dimensions(cls, value: list[str]) -> list[str]:
        for name in value:
            _label_field(
                name,
                "slice dimension",
                "cannot be a slice dimension; slice by a label field such as tags, lang or "
                "category",
            )
        return _listed_once(value, "slice dimension")


class StopEarlyConfig(_Strict):
    """``stop_early:``: run the cases in a seeded random order, in batches, and stop once
    every blocking check is settled by its anytime-valid confidence sequence, or a budget
    is spent (docs/early-stopping.md).  The block turns it on; every key is optional."""

    batch: int = Field(default=50, ge=1, strict=True)
    max_cases: int | None = Field(default=None, ge=1, strict=True)
    max_cost_usd: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    max_seconds: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    # the order's seed (default: the config's seed)
    seed: int | None = Field(default=None, ge=0, strict=True)


class EvalkitConfig(_Strict):
    name: str | None = None
    goldens: str = Field(min_length=1)
    checks: str = Field(min_length=1)
    # names, or {name, kind, ...parameters} declarations (evalkit/_spec/metric_entries.py)
    metrics: list[MetricEntry] = Field(min_length=1)
    plugins: list[str] = Field(default_factory=list)
    python_path: list[str] = Field(default_factory=lambda: ["."])
    target: TargetConfig
    # one judge may be given as a mapping, not a list of one
    judge: Annotated[
        list[JudgeConfig], BeforeValidator(lambda v: [v] if isinstance(v, dict) else v)
    ] = Field(default_factory=list)
    baseline: BaselineConfig | None = None
    require_baseline: bool = Field(default=False, strict=True)
    # A missing/expired reference makes drift (vs_reference) checks block
    # (evalkit/gate/reference.py).
    require_reference: bool = Field(default=False, strict=True)
    output: str | None = Field(default=None, min_length=1)
    seed: int = Field(default=42, ge=0, strict=True)
    n_resamples: int = Field(default=10_000, ge=1, le=MAX_RESAMPLES, strict=True)
    concurrency: int = Field(default=1, ge=1, le=MAX_CONCURRENCY, strict=True)
    rate_limit: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    case_timeout_s: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    # Run every case this many times; its value is the mean over trials (evalkit/_engine/trials.py).
    repeats: int = Field(default=1, ge=1, le=1000, strict=True)
    # Slice dimensions of the goldens and per-slice FDR settings (evalkit._model.slices).
    slices: Annotated[  # `slices: [tags]` is short for `slices: {by: [tags]}`
        SlicesConfig, BeforeValidator(lambda v: {"by": v} if isinstance(v, list) else v)
    ] = Field(default_factory=SlicesConfig)
    # The golden field whose cases move together (evalkit._model.clusters): a document,
    # a conversation, a template.  Inference is then by cluster (evalkit.stats.clustered).
    clusters: str | None = None

    @field_validator("clusters")
    @classmethod
    def _cluster_field(cls, value: str | None) -> str | None:
        if value is not None:
            _label_field(
                value,
                "cluster field",
                "cannot be its cluster; name the field that says which document, "
                "conversation or template it belongs to (metadata.doc_id)",
            )
        return value

    # Early stopping for the gate (evalkit/_app/early_stop.py); None: every case runs.
    # `stop_early:` with nothing under it turns it on with the defaults
    stop_early: Annotated[
        StopEarlyConfig | None, BeforeValidator(lambda v: {} if v is None else v)
    ] = None

    @field_validator("name")
    @classmethod
    def _plain_name(cls, value: str | None) -> str | None:
        if value is not None and not _CONFIG_NAME.match(value):
            raise ValueError(
                f"name {value!r} must be 1-100 letters, digits, '.', '_' or '-', starting with a "
                "letter or digit (it names the run artefact file and the PR comment)"
            )
        return value

    @field_validator("metrics")
    @classmethod
    def _unique_metrics(cls, value: list[str]) -> list[str]:
        return _listed_once(value, "metric")


class LoadedConfig:
    """A validated config plus where it came from (for resolving relative paths)."""

    def __init__(self, model: EvalkitConfig, path: Path, node: yaml.Node | None = None) -> None:
        self.model = model
        self.path = path
        self.root = path.parent
        self._node = node

    def where(self, *loc: int | str) -> str:
        """``evalkit.yaml:LINE`` of a key path such as ``("metrics", 2)`` (no line if unknown)."""
        line = _line_for(self._node, loc) if self._node is not None else None
        return f"{self.path}:{line}" if line else str(self.path)

    @property
    def name(self) -> str:
        return self.model.name or self.path.stem

    @property
    def fetched_dir(self) -> Path:
        """Where copies fetched from a baseline store go: never beside the user's files."""
        return self.root / ".evalkit" / "fetched"

    @property
    def baseline(self) -> BaselineConfig:
        """The baseline section with every default filled in (absent: the defaults)."""
        return self.model.baseline or BaselineConfig()

    def with_overrides(
        self,
        *,
        name: str | None = None,
        require_baseline: bool | None = None,
        require_reference: bool | None = None,
        baseline_store: BaselineStoreName | None = None,
        baseline_name: str | None = None,
        baseline_branch: str | None = None,
        baseline_path: str | Path | None = None,
        promote_branches: Sequence[str] | None = None,
    ) -> LoadedConfig:
        """A new config with the given settings replaced (None: keep the file's).

        Not a mutation: the Action merges its inputs here and the result is validated
        like the file itself, so an input cannot produce a config the file could not.
        ``baseline_path`` relative to the config's folder, or absolute.
        """
        data = self.model.model_dump(exclude_unset=True)
        if name is not None:
            data["name"] = name
        if require_baseline is not None:
            data["require_baseline"] = require_baseline
        if require_reference is not None:
            data["require_reference"] = require_reference
        section = dict(data.get("baseline") or {})
        for key, value in (
            ("store", baseline_store),
            ("name", baseline_name),
            ("branch", baseline_branch),
            ("path", None if baseline_path is None else str(baseline_path)),
            ("promote_branches", None if promote_branches is None else list(promote_branches)),
        ):
            if value is not None:
                section[key] = value
        if section:
            data["baseline"] = section
        try:
            model = EvalkitConfig.model_validate(data)
        except ValidationError as exc:
            message = _describe(exc.errors()[0])
            raise ConfigError(f"{self.path}: {message} (after applying the overrides)") from None
        return LoadedConfig(model, self.path)

    def resolve(self, relative: str) -> Path:
        p = Path(relative).expanduser()
        return p if p.is_absolute() else (self.root / p)

    @property
    def output_path(self) -> Path:
        if self.model.output:
            return self.resolve(self.model.output)
        return self.resolve(f".evalkit/runs/{self.name}.json")


def _line_for(node: yaml.Node | None, loc: tuple[int | str, ...]) -> int | None:
    line = _yaml.line_of(node)
    for part in loc:
        if isinstance(part, int):
            items = _yaml.sequence_items(node)
            if part >= len(items):
                break
            node = items[part]
        else:
            pair = _yaml.mapping_value_nodes(node).get(part)
            if pair is None:
                break
            key, node = pair
            line = _yaml.line_of(key)
            continue
        line = _yaml.line_of(node)
    return line


def _plain_loc(error: Mapping[str, Any]) -> tuple[int | str, ...]:
    """The error's key path without pydantic's validator tags (``function-after[…]``)."""
    return tuple(p for p in error.get("loc", ()) if not (isinstance(p, str) and "[" in p))


def _section_model(annotation: Any) -> type[BaseModel] | None:
    """The settings model an annotation holds (``X``, ``X | None``, ``list[X]``), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _section_model(arg)
        if found is not None:
            return found
    return None


def allowed_keys(loc: tuple[int | str, ...]) -> tuple[str, ...]:
    """The keys the mapping at key path ``loc`` of ``evalkit.yaml`` accepts (``()``: any)."""
    model: type[BaseModel] | None = EvalkitConfig
    for part in loc:
        if model is None:
            return ()
        if isinstance(part, str):
            field = model.model_fields.get(part)
            model = None if field is None else _section_model(field.annotation)
        # an int indexes a list of the section model found for its key: stay on it
    return tuple(model.model_fields) if model is not None else ()


def _as_written(loc: tuple[int | str, ...], data: Any) -> tuple[int | str, ...]:
    """The key path as the file spells it: a lone ``judge:`` mapping (which the model
    makes a one-item list) has no index 0."""
    out: list[int | str] = []
    node = data
    for part in loc:
        if isinstance(part, int) and isinstance(node, dict):
            continue
        out.append(part)
        if isinstance(part, int) and isinstance(node, list) and 0 <= part < len(node):
            node = node[part]
        elif isinstance(part, str) and isinstance(node, dict):
            node = node.get(part)
        else:
            node = None
    return tuple(out)


def _key_path(loc: tuple[int | str, ...]) -> str:
    """``judge[0].token_limit_key``: list items by index, as in most config tools' errors."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text or "(top level)"


def _owner(loc: tuple[int | str, ...], data: Any) -> str:
    """`` (the judge of metric 'helpfulness')`` for a key inside a judge, else ``""``."""
    if len(loc) < 2 or loc[0] != "judge" or not isinstance(data, dict):
        return ""
    entry = data.get("judge")
    if isinstance(loc[1], int) and isinstance(entry, list):
        entry = entry[loc[1]] if loc[1] < len(entry) else None
    metric = entry.get("metric") if isinstance(entry, dict) else None
    return f" (the judge of metric {metric!r})" if isinstance(metric, str) else ""


def _describe(error: Mapping[str, Any], data: Any = None) -> str:
    loc = _as_written(_plain_loc(error), data)
    path = _key_path(loc)
    owner = _owner(loc, data)
    kind = error.get("type", "")
    if kind == "extra_forbidden":
        model_loc = _plain_loc(error)
        hint = did_you_mean(str(loc[-1]), allowed_keys(model_loc[:-1])) if loc else ""
        return f"unknown key {path!r}{owner}{hint or '; remove it or check its spelling'}"
    if kind == "missing":
        return f"missing required key {path!r}{owner}"
    msg = str(error.get("msg", "invalid value")).removeprefix("Value error, ")
    return f"{path}{owner}: {msg}"


def load_config(path: str | Path) -> LoadedConfig:
    """Read and validate ``evalkit.yaml``; every defect is one :class:`ConfigError` line."""
    p = Path(path)
    try:
        data = _bounded.read_bytes(p)
    except FileNotFoundError:
        raise ConfigError(f"{p}: config file not found (pass --config PATH)") from None
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read config: {exc.strerror or exc}") from None
    text = decode_utf8(data, str(p), ConfigError)
    doc = _yaml.parse(text, str(p), ConfigError)
    if not isinstance(doc.data, dict):
        raise ConfigError(f"{p}: expected a mapping of settings (goldens, checks, metrics, target)")
    data = _yaml_values.plain(doc.data)
    try:
        model = EvalkitConfig.model_validate(data)
    except ValidationError as exc:
        errors = _first_cause_first(exc.errors())
        first = errors[0]
        message = _describe(first, data)
        line = _line_for(doc.node, _as_written(_plain_loc(first), data))
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        where = f"{p}:{line}" if line else str(p)
        raise ConfigError(f"{where}: {message}{more}") from None
    return LoadedConfig(model, p, doc.node)


def _first_cause_first(errors: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The errors to report, an unknown key first: a typo (``chekcs:``) explains the rest,
    so the required key it misspells is not also counted as missing."""
    unknown = [e for e in errors if e.get("type") == "extra_forbidden"]
    meant: set[tuple[int | str, ...]] = set()
    for error in unknown:
        loc = _plain_loc(error)
        word = closest(str(loc[-1]), allowed_keys(loc[:-1])) if loc else None
        if word is not None:
            meant.add((*loc[:-1], word))
    rest = [
        e
        for e in errors
        if e.get("type") != "extra_forbidden"
        and not (e.get("type") == "missing" and _plain_loc(e) in meant)
    ]
    return [*unknown, *rest]


_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand_env(value: Any, env: Mapping[str, str], where: str) -> Any:
    """Expand ``${NAME}`` / ``${NAME:-default}`` in every string of a nested value."""
    if isinstance(value, str):

        def sub(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            if name in env:
                return env[name]
            if default is not None:
                return default
            raise ConfigError(
                f"{where}: environment variable {name} is not set (referenced as ${{{name}}})"
            )

        return _ENV.sub(sub, value)
    if isinstance(value, dict):
        return {k: expand_env(v, env, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [expand_env(v, env, f"{where}[{i}]") for i, v in enumerate(value)]
    return value
