"""The Action's inputs (the ``with:`` values, ``INPUT_*``), validated, with evalkit.yaml merged."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evalkit._spec.config import LoadedConfig, load_config, validate_config_name
from evalkit.errors import ConfigError
from evalkit.github.client import RetryPolicy
from evalkit.github.outputs import Console

Mode = Literal["gate", "promote", "comment", "pin"]
MODES: tuple[Mode, ...] = ("gate", "promote", "comment", "pin")
Store = Literal["artifact", "branch", "file", "none"]

DEFAULT_OUTPUT_DIR = ".evalkit/action"

_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off", ""}
_SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSWORD|KEY", re.IGNORECASE)


def _input(env: Mapping[str, str], name: str, default: str = "") -> str:
    # The runner passes `with:` values as INPUT_<NAME>, upper-cased, hyphens kept.
    return env.get(f"INPUT_{name.upper()}", default).strip() or default


def _bool_input(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(f"INPUT_{name.upper()}", "").strip().lower()
    if raw == "":
        return default
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise ConfigError(f"input {name}: expected true or false, got {raw!r}")


def _choice(env: Mapping[str, str], name: str, default: str, choices: Sequence[str]) -> str:
    value = _input(env, name, default).lower()
    if value not in choices:
        raise ConfigError(f"input {name}: expected one of {', '.join(choices)}, got {value!r}")
    return value


@dataclass(frozen=True)
class ActionInputs:
    """The action's ``with:`` inputs, validated. None means "not given": evalkit.yaml decides."""

    config: str
    config_name: str | None
    token: str
    mode: Mode
    baseline_store: Store | None
    baseline_name: str | None
    baseline_branch: str | None
    baseline_path: str | None
    comment: bool
    comment_author: str | None
    require_baseline: bool | None
    output_dir: str
    report_dir: str
    pin: str | None = None  # mode: pin - which promotion becomes the reference
    require_reference: bool | None = None
    # A python target in child processes without the job's token (evalkit._app.isolated_target).
    isolate_target: bool = False
    # Branches besides the default one whose pushes promote (baseline.promote_branches).
    promote_branches: tuple[str, ...] | None = None
    # The python target's own packages, installed before the gate (action/target_packages).
    target_requirements: str | None = None
    target_project: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ActionInputs:
        mode = _choice(env, "mode", "gate", MODES)
        store = _input(env, "baseline-store") and _choice(
            env, "baseline-store", "", ("artifact", "branch", "file", "none")
        )
        config_name = _input(env, "config-name") or None
        if config_name is not None:
            validate_config_name(config_name)
        report_dir = _input(env, "report-dir")
        if mode == "comment" and not report_dir:
            raise ConfigError("input report-dir is required with mode: comment")
        require = _input(env, "require-baseline")
        require_ref = _input(env, "require-reference")
        pin = _input(env, "pin") or None
        if mode == "pin" and pin is None:
            raise ConfigError(
                "input pin is required with mode: pin: a tag or release (v1.2), a date "
                "(2026-11-30) or 'N promotions ago'"
            )
        if pin is not None:
            from evalkit._store.history import parse_pin

            parse_pin(pin, where="input pin")
        return cls(
            config=_input(env, "config", "evalkit.yaml"),
            config_name=config_name,
            token=_input(env, "github-token") or env.get("GITHUB_TOKEN", ""),
            mode=mode,  # type: ignore[arg-type]  # checked by _choice
            baseline_store=store or None,  # type: ignore[arg-type]
            baseline_name=_input(env, "baseline-name") or None,
            baseline_branch=_input(env, "baseline-branch") or None,
            baseline_path=_input(env, "baseline-path") or None,
            comment=_bool_input(env, "comment", True),
            comment_author=_input(env, "comment-author") or None,
            require_baseline=_bool_input(env, "require-baseline", False) if require else None,
            output_dir=_input(env, "output-dir", DEFAULT_OUTPUT_DIR),
            report_dir=report_dir,
            pin=pin,
            require_reference=_bool_input(env, "require-reference", False) if require_ref else None,
            isolate_target=_bool_input(env, "isolate-target", False),
            promote_branches=_branch_list(_input(env, "promote-branches")),
            target_requirements=_input(env, "target-requirements") or None,
            target_project=_input(env, "target-project") or None,
        )


def _branch_list(raw: str) -> tuple[str, ...] | None:
    """``release/*, stable`` or one per line: the names; empty: not given."""
    names = tuple(part.strip() for part in raw.replace("\n", ",").split(",") if part.strip())
    return names or None


@dataclass(frozen=True)
class Settings:
    """evalkit.yaml, read once by :func:`~evalkit._spec.config.load_config`, inputs merged in.

    Input > config file > the defaults :class:`~evalkit._spec.config.BaselineConfig` decides."""

    config: LoadedConfig
    config_name: str
    output_dir: Path

    @property
    def config_path(self) -> Path:
        return self.config.path

    @property
    def artifact_name(self) -> str:
        return self.config.baseline.name

    @property
    def require_baseline(self) -> bool:
        return self.config.model.require_baseline

    @property
    def require_reference(self) -> bool:
        return self.config.model.require_reference


def resolve_settings(inputs: ActionInputs, workspace: Path) -> Settings:
    """Decide config name, baseline store and output folder for this run."""
    config_path = Path(inputs.config)
    if not config_path.is_absolute():
        config_path = workspace / config_path
    if not config_path.is_file():
        raise ConfigError(f"{config_path}: config file not found; set the action's config input")
    loaded = load_config(config_path)
    baseline_path: Path | None = None
    if inputs.baseline_path:
        baseline_path = Path(inputs.baseline_path)
        baseline_path = baseline_path if baseline_path.is_absolute() else workspace / baseline_path
    if inputs.baseline_store == "file" and baseline_path is None and not loaded.baseline.path:
        raise ConfigError(
            "baseline-store file needs a path: set the baseline-path input or baseline.path "
            f"in {config_path.name}"
        )
    merged = loaded.with_overrides(
        name=inputs.config_name,
        require_baseline=inputs.require_baseline,
        require_reference=inputs.require_reference,
        baseline_store=inputs.baseline_store,
        baseline_name=inputs.baseline_name,
        baseline_branch=inputs.baseline_branch,
        baseline_path=baseline_path,
        promote_branches=inputs.promote_branches,
    )
    output_dir = Path(inputs.output_dir)
    return Settings(
        config=merged,
        config_name=validate_config_name(merged.name),
        output_dir=output_dir if output_dir.is_absolute() else workspace / output_dir,
    )


def mask_secrets(env: Mapping[str, str], inputs: ActionInputs, console: Console) -> None:
    """Mask the token and every secret-looking input in the log, before anything is printed."""
    secrets = [inputs.token] if inputs.token else []
    secrets += [
        value
        for name, value in sorted(env.items())
        if name.startswith("INPUT_") and _SECRET_NAME.search(name[6:]) and value.strip()
    ]
    for secret in dict.fromkeys(secrets):  # each once, in a stable order
        console.mask(secret)


def retry_from_env(env: Mapping[str, str]) -> RetryPolicy:
    # EVALKIT_GITHUB_RETRY_DELAY lets an end-to-end test run the real entrypoint
    # against a failing server without waiting out the production backoff.
    raw = env.get("EVALKIT_GITHUB_RETRY_DELAY", "").strip()
    if not raw:
        return RetryPolicy()
    try:
        delay = float(raw)
    except ValueError:
        raise ConfigError(
            f"EVALKIT_GITHUB_RETRY_DELAY must be a number of seconds, got {raw!r}"
        ) from None
    return RetryPolicy(base_delay=max(0.0, delay))
