"""``evalkit.yaml``: one file that tells the gate where everything is.

Validated with pydantic; unknown keys are refused with their key path and the
line they are on.  Relative paths resolve against the config file's folder.
``${NAME}`` in the HTTP target's url, headers and payload is expanded from the
environment when the target is built (so ``evalkit show`` needs no secrets).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from evalkit import _bounded, _yaml
from evalkit.errors import ConfigError


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HttpTargetConfig(_Strict):
    url: str
    method: Literal["POST", "GET"] = "POST"
    headers: dict[str, str] = Field(default_factory=dict)
    payload: Any = Field(default_factory=lambda: {"query": "{{query}}"})
    extract: str
    timeout_s: float = Field(default=30.0, gt=0)
    meta_keys: list[str] = Field(default_factory=list)

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


class JudgeConfig(_Strict):
    metric: str
    model: str = Field(min_length=1)
    rubric: str | None = None
    rubric_file: str | None = None
    scale: int = Field(default=5, ge=2)
    higher_is_better: bool = True
    cache_path: str | None = ".evalkit/judge-cache.json"
    # USD per million tokens, {"input": …, "output": …}: adds cost to each row's meta.
    prices: dict[str, float] | None = None

    @model_validator(mode="after")
    def _one_rubric(self) -> JudgeConfig:
        if (self.rubric is None) == (self.rubric_file is None):
            raise ValueError("give exactly one of 'rubric' or 'rubric_file'")
        return self


class BaselineConfig(_Strict):
    store: Literal["file", "artifact", "branch"] = "file"
    path: str | None = None
    name: str | None = None
    branch: str = "evalkit-baselines"

    @model_validator(mode="after")
    def _path_for_file(self) -> BaselineConfig:
        if self.store == "file" and self.path is None:
            raise ValueError("store 'file' needs a 'path' to the baseline artefact")
        return self


class EvalkitConfig(_Strict):
    name: str | None = None
    goldens: str
    checks: str
    metrics: list[str] = Field(min_length=1)
    plugins: list[str] = Field(default_factory=list)
    python_path: list[str] = Field(default_factory=lambda: ["."])
    target: TargetConfig
    judge: list[JudgeConfig] = Field(default_factory=list)
    baseline: BaselineConfig | None = None
    require_baseline: bool = False
    output: str | None = None
    seed: int = 42
    n_resamples: int = Field(default=10_000, ge=1)
    concurrency: int = Field(default=1, ge=1)
    rate_limit: float | None = Field(default=None, gt=0)
    case_timeout_s: float | None = Field(default=None, gt=0)

    @field_validator("judge", mode="before")
    @classmethod
    def _judge_list(cls, value: Any) -> Any:
        return [value] if isinstance(value, dict) else value

    @field_validator("metrics")
    @classmethod
    def _unique_metrics(cls, value: list[str]) -> list[str]:
        dupes = sorted({m for m in value if value.count(m) > 1})
        if dupes:
            raise ValueError(f"metric listed more than once: {', '.join(dupes)}")
        return value


class LoadedConfig:
    """A validated config plus where it came from (for resolving relative paths)."""

    def __init__(self, model: EvalkitConfig, path: Path) -> None:
        self.model = model
        self.path = path
        self.root = path.parent

    @property
    def name(self) -> str:
        return self.model.name or self.path.stem

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


def _describe(error: Mapping[str, Any]) -> tuple[str, str]:
    loc = tuple(p for p in error.get("loc", ()) if not (isinstance(p, str) and "[" in p))
    path = ".".join(str(p) for p in loc) or "(top level)"
    kind = error.get("type", "")
    if kind == "extra_forbidden":
        return path, f"unknown key {path!r}; remove it or check its spelling"
    if kind == "missing":
        return path, f"missing required key {path!r}"
    msg = str(error.get("msg", "invalid value")).removeprefix("Value error, ")
    return path, f"{path}: {msg}"


def load_config(path: str | Path) -> LoadedConfig:
    """Read and validate ``evalkit.yaml``; every defect is one :class:`ConfigError` line."""
    p = Path(path)
    try:
        text = _bounded.read_text(p, encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{p}: config file not found (pass --config PATH)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: cannot read config: {exc}") from None
    doc = _yaml.parse(text, str(p), ConfigError)
    if not isinstance(doc.data, dict):
        raise ConfigError(f"{p}: expected a mapping of settings (goldens, checks, metrics, target)")
    try:
        model = EvalkitConfig.model_validate(_yaml.plain(doc.data))
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(first.get("loc", ()))
        _, message = _describe(first)
        line = _line_for(doc.node, tuple(x for x in loc if isinstance(x, int | str)))
        more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        where = f"{p}:{line}" if line else str(p)
        raise ConfigError(f"{where}: {message}{more}") from None
    return LoadedConfig(model, p)


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
