"""The GitHub Action: inputs -> baseline -> gate -> summary, outputs, annotations, comment.

The gate itself is injected as a :data:`GateRunner` (the CLI passes the real one), so
this module owns only the GitHub side of the job:

``gate`` mode (pull requests, or any event)
    fetch the baseline from the configured store, run the gate, write the step summary,
    the step outputs, up to ten ``::error`` annotations on the checks file, the report
    bundle for the fork companion, and the sticky PR comment.

``promote`` mode (push to the default branch)
    run the gate without a baseline to produce the candidate artefact, then hand it to
    the store: a path for ``actions/upload-artifact``, a commit on the store branch, or
    a local file.

``comment`` mode (the ``workflow_run`` companion for fork PRs)
    post the comment a fork run left behind, after checking it belongs to the PR.

``pin`` mode (a push or a manual run on the default branch)
    pin one promotion (the ``pin`` input: a tag/release, a date, "N promotions ago") as
    the drift checks' reference, kept until pinned again: a commit on the store branch,
    or a folder for ``actions/upload-artifact`` (artifact ``<baseline-name>-reference``).

Exit codes are the gate's (:data:`evalkit.exit_codes.ACTION_CODES`, never 4: the Action
gates no subset). Failing to *comment* never changes the exit code (the
verdict is already in the summary and outputs); failing to *fetch the baseline* from
GitHub is exit 3, because an outage must not read as "no baseline" and pass.
"""

from __future__ import annotations

import json
import os
import re
import socket
import struct
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from evalkit._spec.config import LoadedConfig, load_config, validate_config_name
from evalkit._store.protocol import (
    BaselineFetch,
    BaselineStore,
    FetchRequest,
    GitHubAccess,
    Preferred,
    PromoteRequest,
)
from evalkit._util import bounded as _bounded
from evalkit._util.atomic import write_bytes_atomic
from evalkit.errors import ConfigError, EvalkitError, InputError, RuntimeFailure
from evalkit.exit_codes import ExitCode
from evalkit.github.client import (
    GithubFactory,
    RetryPolicy,
    call_github,
    default_github_factory,
)
from evalkit.github.comment import (
    GITHUB_ACTIONS_BOT,
    marker_for,
    prepare_body,
    sanitize_untrusted_body,
    upsert_sticky_comment,
)
from evalkit.github.context import GitHubContext, WorkflowRunInfo
from evalkit.github.errors import GitHubApiError, GitHubPermissionError
from evalkit.github.outputs import (
    MAX_ERROR_ANNOTATIONS,
    Annotation,
    Console,
    append_summary,
    env_path,
    relative_to_workspace,
    write_outputs,
)

if TYPE_CHECKING:
    import httpx
    from github.Repository import Repository

    from evalkit._store.history import TaggedCommit
    from github import Github

Mode = Literal["gate", "promote", "comment", "pin"]
MODES: tuple[Mode, ...] = ("gate", "promote", "comment", "pin")
Store = Literal["artifact", "branch", "file", "none"]

COMMENT_BODY_FILE = "comment.md"
COMMENT_META_FILE = "comment.json"
DEFAULT_OUTPUT_DIR = ".evalkit/action"
# The most we read of a fork run's comment body (it is capped to 65,536 chars anyway).
MAX_BUNDLE_BYTES = 1024 * 1024


# -- the contract with the gate ------------------------------------------------------------


@dataclass(frozen=True)
class GateRequest:
    """What the action asks the gate to do."""

    config_path: Path
    config_name: str  # the reporter must put marker_for(config_name) in the markdown
    config: LoadedConfig  # evalkit.yaml with the action's inputs merged in (read once)
    baseline_path: Path | None
    baseline_status: Literal["found", "missing", "expired", "none"]
    baseline_detail: str  # one sentence on where the baseline came from / why none
    require_baseline: bool
    output_dir: Path  # write report files (markdown, json, candidate artefact) here
    details_url: str | None = None  # this workflow run's page, for the report's link
    reference: BaselineFetch | None = None  # the pinned reference, when a drift check wants it
    require_reference: bool = False  # a missing/expired reference blocks the drift checks
    # The Action's store (with GitHub access): the HTML report's drift trend reads its history.
    store: BaselineStore | None = None


@dataclass(frozen=True)
class FailingCheck:
    """A check that did not pass, for an ``::error`` annotation."""

    id: str
    message: str


@dataclass(frozen=True)
class GateOutcome:
    """What the gate reports back."""

    exit_code: int  # an evalkit.exit_codes.ExitCode: the gate report's exit_code
    verdict: str  # pass | warn | fail | error (the gate report's headline)
    blocking_failures: int
    markdown: str  # the PR comment body, including the hidden marker line
    failing_checks: Sequence[FailingCheck] = ()
    candidate_path: Path | None = None  # the candidate run artefact (promoted as-is)
    report_paths: Mapping[str, Path] = field(default_factory=dict)  # "markdown", "json", ...
    checks_path: Path | None = None  # annotations point here


GateRunner = Callable[[GateRequest], GateOutcome]


# -- inputs --------------------------------------------------------------------------------

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
        )


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
    def store(self) -> str:
        return self.config.baseline.kind

    @property
    def artifact_name(self) -> str:
        return self.config.baseline.name

    @property
    def branch(self) -> str:
        return self.config.baseline.branch

    @property
    def file_path(self) -> Path | None:
        path = self.config.baseline.path
        return self.config.resolve(path) if path is not None else None

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
    )
    output_dir = Path(inputs.output_dir)
    return Settings(
        config=merged,
        config_name=validate_config_name(merged.name),
        output_dir=output_dir if output_dir.is_absolute() else workspace / output_dir,
    )


def _mask_secrets(env: Mapping[str, str], inputs: ActionInputs, console: Console) -> None:
    secrets = [inputs.token] if inputs.token else []
    secrets += [
        value
        for name, value in sorted(env.items())
        if name.startswith("INPUT_") and _SECRET_NAME.search(name[6:]) and value.strip()
    ]
    for secret in dict.fromkeys(secrets):  # each once, in a stable order
        console.mask(secret)


# -- helpers -------------------------------------------------------------------------------

HOST_GATEWAY_VAR = "EVALKIT_HOST_GATEWAY"


def host_gateway(route_table: Path = Path("/proc/net/route")) -> str | None:
    """The container's default gateway (the runner host, seen from the action container).

    A service started directly on the runner (bound to 0.0.0.0) is reachable from inside
    the Docker action at this address; evalkit.yaml can say ``${EVALKIT_HOST_GATEWAY}``.
    """
    try:
        lines = route_table.read_text(encoding="ascii").splitlines()[1:]
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        # Iface Destination Gateway Flags ...: the default route has destination 0.
        if len(fields) > 3 and fields[1] == "00000000" and int(fields[3], 16) & 0x2:
            return socket.inet_ntoa(struct.pack("<L", int(fields[2], 16)))
    return None


def _export_host_gateway(env: Mapping[str, str]) -> None:
    # The gate expands ${ENV} in evalkit.yaml from the process environment.
    if HOST_GATEWAY_VAR not in env and HOST_GATEWAY_VAR not in os.environ:
        gateway = host_gateway()
        if gateway:
            os.environ[HOST_GATEWAY_VAR] = gateway


def find_check_line(checks_path: Path, check_id: str) -> int | None:
    """The 1-based line of ``id: <check_id>`` in the checks file, for the annotation."""
    pattern = re.compile(
        r"^\s*(?:-\s*)?id\s*:\s*(['\"]?)" + re.escape(check_id) + r"\1\s*(?:#.*)?$"
    )
    try:
        lines = checks_path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for number, line in enumerate(lines, start=1):
        if pattern.match(line):
            return number
    return None


def failing_check_annotations(
    failing: Sequence[FailingCheck], checks_path: Path | None, workspace: Path
) -> list[Annotation]:
    """At most ten ``::error`` annotations (the runner drops the rest) on the checks file."""
    file = relative_to_workspace(checks_path, workspace) if checks_path else None

    def one(check: FailingCheck) -> Annotation:
        line = find_check_line(checks_path, check.id) if checks_path else None
        return Annotation(
            "error",
            f"{check.id}: {check.message}",
            title=f"evalkit check {check.id} failed",
            file=file,
            line=line,
        )

    if len(failing) <= MAX_ERROR_ANNOTATIONS:
        return [one(c) for c in failing]
    shown = [one(c) for c in failing[: MAX_ERROR_ANNOTATIONS - 1]]
    rest = failing[MAX_ERROR_ANNOTATIONS - 1 :]
    shown.append(
        Annotation(
            "error",
            f"{len(rest)} more failing check(s): " + ", ".join(c.id for c in rest),
            title="evalkit: more checks failed",
            file=file,
        )
    )
    return shown


_SAFE_WORD = re.compile(r"^[A-Za-z0-9._-]{1,40}$")


def _safe_word(value: str) -> str:
    return value if _SAFE_WORD.match(value) else "unknown"


@dataclass
class _Run:
    """Per-invocation state shared by the mode functions."""

    env: Mapping[str, str]
    inputs: ActionInputs
    ctx: GitHubContext
    console: Console
    github_factory: GithubFactory
    http_client: httpx.Client | None
    retry: RetryPolicy
    outputs: dict[str, str] = field(default_factory=dict)
    config_name: str | None = None  # known once evalkit.yaml is read: the comment's marker
    output_dir: Path | None = None  # known once evalkit.yaml is read
    _github: Github | None = None
    _identity: str | None = None

    @property
    def workspace(self) -> Path:
        return self.ctx.workspace

    def resolve(self, path: str) -> Path:
        p = Path(path)
        return p if p.is_absolute() else self.workspace / p

    @property
    def details_url(self) -> str | None:
        if not self.ctx.run_id:
            return None
        return f"{self.ctx.server_url}/{self.ctx.repository}/actions/runs/{self.ctx.run_id}"

    def rel(self, path: Path) -> str:
        return relative_to_workspace(path, self.workspace)

    def repo(self) -> Repository:
        if self._github is None:
            self._github = self.github_factory(self.ctx.api_url, self.inputs.token)
        return self._github.get_repo(self.ctx.repository)

    def comment_identity(self) -> str:
        """The login whose marked comment is ours: the input, else the token's own user.

        The job's GITHUB_TOKEN (an installation token) may not read ``/user`` (403): its
        comments are github-actions[bot]'s. A GitHub App token needs ``comment-author``.
        GitHub failing to answer (5xx after the retries) also means the bot, with a warning.
        """
        if self.inputs.comment_author:
            return self.inputs.comment_author
        if self._identity is None:
            if self._github is None:
                self._github = self.github_factory(self.ctx.api_url, self.inputs.token)
            gh = self._github
            try:
                login = call_github(
                    "read the token's user", lambda: gh.get_user().login, retry=self.retry
                )
                self._identity = str(login)
            except GitHubApiError as exc:
                if exc.status not in (401, 403, 404):
                    # GitHub failing (retried already) says nothing about who we are: the
                    # job token's identity is the likeliest, and a comment is worth more
                    # than a failed step.
                    self.console.warning(
                        f"{exc}; looking for {GITHUB_ACTIONS_BOT}'s comment (set the "
                        "comment-author input if the token is another identity)",
                        title="evalkit: token's user unknown",
                    )
                self._identity = GITHUB_ACTIONS_BOT
        return self._identity

    def access(self) -> GitHubAccess:
        return GitHubAccess(
            repo=self.repo,
            repo_facts=self.repo_facts,
            token=self.inputs.token,
            retry=self.retry,
            http=self.http_client,
        )

    def repo_facts(self) -> tuple[int, str]:
        """(repository id, default branch), from the payload or, failing that, the API."""
        repo_id, default_branch = self.ctx.repository_id, self.ctx.default_branch
        if repo_id is None or default_branch is None:
            raw: dict[str, Any] = call_github(
                f"get repository {self.ctx.repository}",
                lambda: self.repo().raw_data,
                retry=self.retry,
            )
            repo_id = repo_id if repo_id is not None else int(raw["id"])
            default_branch = default_branch or str(raw["default_branch"])
        return repo_id, default_branch

    def out(self, **values: str) -> None:
        """Set step outputs; ``baseline_sha=`` becomes the output ``baseline-sha``."""
        self.outputs.update({name.replace("_", "-"): value for name, value in values.items()})

    def finish(self, exit_code: int) -> int:
        if self.output_dir is not None:
            hand_back(self.output_dir, self.workspace)
        self.outputs["exit-code"] = str(int(exit_code))
        path = env_path(self.env, "GITHUB_OUTPUT")
        if path is not None:
            write_outputs(path, self.outputs)
        return exit_code

    def summary(self, markdown: str) -> None:
        path = env_path(self.env, "GITHUB_STEP_SUMMARY")
        if path is not None:
            append_summary(path, markdown)


def hand_back(folder: Path, workspace: Path) -> None:
    """Give what the action wrote under ``folder`` to the workspace's owner.

    GitHub runs the container as root, so its files in the mounted workspace are
    root-owned, and on a self-hosted runner the next job's checkout cannot clean them.
    As root, chown ``folder`` (and the folders made for it inside the workspace) to the
    workspace's owner; otherwise nothing to do. Best effort: a failure is not an error.
    """
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return
    try:
        owner = workspace.stat()
        root = workspace.resolve()
        target = folder.resolve()
        if owner.st_uid == 0 or not target.is_relative_to(root):
            return
        paths = [*target.rglob("*"), target]
        paths += [p for p in target.parents if p.is_relative_to(root) and p != root]
        for path in paths:
            if path.lstat().st_uid == 0:
                os.chown(path, owner.st_uid, owner.st_gid, follow_symlinks=False)
    except OSError:
        return


def _md_text(text: str) -> str:
    """Plain text safe inside markdown/HTML (store details can carry branch names)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# -- baseline ------------------------------------------------------------------------------


def _merge_base(run: _Run) -> str | None:
    """The first parent of the PR's merge commit: the base commit the candidate was built on.

    ``pull_request.base.sha`` in the event can lag the base branch tip the merge ref was
    made from (by hours), so it is only the fallback. None when GITHUB_SHA is not a merge
    ref's commit or cannot be read (the job then falls back, with a notice).
    """
    ctx = run.ctx
    if not (ctx.sha and ctx.ref.startswith("refs/pull/") and ctx.ref.endswith("/merge")):
        return None
    try:
        raw: dict[str, Any] = call_github(
            f"read the merge commit {ctx.sha[:12]} of {ctx.ref}",
            lambda: run.repo().get_git_commit(ctx.sha).raw_data,
            retry=run.retry,
        )
    except GitHubApiError as exc:
        run.console.notice(f"{exc}; preferring the event's base.sha")
        return None
    parents = [p.get("sha") for p in raw.get("parents") or [] if isinstance(p, dict)]
    if len(parents) < 2 or not isinstance(parents[0], str):
        return None  # not a merge commit: nothing to learn from it
    return parents[0]


def preferred_commits(run: _Run) -> list[Preferred]:
    """Whose baseline a PR wants, best first: the merge base, then the event's base.sha."""
    pr = run.ctx.pull_request
    if pr is None:
        return []
    preferred: list[Preferred] = []
    merge_base = _merge_base(run)
    if merge_base:
        preferred.append(Preferred(merge_base, f"the merge base: first parent of {run.ctx.ref}"))
    if pr.base_sha and pr.base_sha != merge_base:
        lag = f", behind the merge base {merge_base[:12]}" if merge_base else ""
        preferred.append(Preferred(pr.base_sha, f"the event's pull_request.base.sha{lag}"))
    return preferred


def _merge_base_relation(baseline: BaselineFetch, preferred: Sequence[Preferred]) -> str:
    """true / false / unknown: is the baseline from the commit the merge ref was built on?"""
    merge_base = next((p.sha for p in preferred if p.why.startswith("the merge base")), None)
    if merge_base is None or not baseline.found:
        return "unknown"
    return "true" if baseline.sha == merge_base else "false"


def _store(run: _Run, settings: Settings) -> BaselineStore:
    from evalkit._app.store_opening import open_config_store

    return open_config_store(settings.config, run.access())


# -- modes ---------------------------------------------------------------------------------


def _config(run: _Run) -> Settings:
    settings = resolve_settings(run.inputs, run.workspace)
    if not settings.output_dir.resolve().is_relative_to(run.workspace.resolve()):
        # Only the workspace is mounted from the runner: anything else vanishes with
        # the container, and later steps could not read the reports.
        run.console.warning(
            f"output-dir {settings.output_dir} is outside the workspace {run.workspace}: "
            "its files are lost when the action's container exits; use a relative path",
            title="evalkit: output-dir outside the workspace",
        )
    settings.output_dir.mkdir(parents=True, exist_ok=True)
    run.config_name = settings.config_name
    run.output_dir = settings.output_dir
    run.out(config_name=settings.config_name, report_dir=run.rel(settings.output_dir))
    return settings


def _error_state(run: _Run, message: str, exit_code: int, *, title: str) -> int:
    """Fail the step visibly everywhere: annotation, outputs, summary and the PR comment.

    The sticky comment is updated too, so yesterday's PASS does not stay on a PR whose
    gate can no longer run.
    """
    run.console.error(message, title=title)
    run.outputs.setdefault("verdict", "error")
    run.outputs.setdefault("blocking-failures", "0")
    text = _md_text(message)
    run.summary(f"### evalkit: error\n\n{text}\n")
    if run.config_name is not None and run.inputs.mode == "gate":
        body = (
            f"{marker_for(run.config_name)}\n### evalkit: error (exit {int(exit_code)})\n\n"
            f"The gate could not decide: {text}\n\nAny earlier verdict on this PR no longer "
            "applies.\n"
        )
        if run.details_url:
            body += f"\n[Workflow run]({run.details_url})\n"
        _maybe_comment(run, body, run.config_name)
    return run.finish(exit_code)


def _call_gate(run: _Run, gate: GateRunner, request: GateRequest) -> GateOutcome | int:
    try:
        return gate(request)
    except EvalkitError as exc:
        return _error_state(run, str(exc), exc.exit_code, title="evalkit gate error")


def _report_outputs(run: _Run, outcome: GateOutcome) -> None:
    run.out(
        verdict=_safe_word(outcome.verdict),
        blocking_failures=str(outcome.blocking_failures),
    )
    for kind, path in outcome.report_paths.items():
        key = re.sub(r"[^a-z0-9]+", "-", kind.lower()).strip("-")
        if key:
            run.outputs[f"report-{key}"] = run.rel(path)
    if outcome.candidate_path is not None:
        run.outputs["candidate-path"] = run.rel(outcome.candidate_path)


def _announce(
    console: Console, what: str, checks: str, fetch: BaselineFetch, detail: str, *, blocking: bool
) -> None:
    """One log line for a fetched baseline or reference: a notice, or why there is none."""
    if fetch.found:
        console.notice(f"evalkit {what}: {detail}")
        return
    why = f" — blocking: require-{what} is on" if blocking else ""
    console.warning(
        f"no {what} ({fetch.status}): {fetch.detail}; {checks} checks report no-{what}{why}",
        title=f"evalkit: no {what}",
    )


def fetch_for_action(
    store: BaselineStore, config: LoadedConfig, dest_dir: Path
) -> BaselineFetch | None:
    """The Action's reference fetch: the store's pinned reference, when a check needs it.

    A checks file that does not load is left for the gate to report (None here).
    """
    from evalkit._spec.checks import load_checks_file
    from evalkit._store.protocol import FetchRequest
    from evalkit.errors import CheckError
    from evalkit.gate.reference import wants_reference

    try:
        checks = load_checks_file(config.resolve(config.model.checks)).checks
    except CheckError:
        return None
    if not wants_reference(checks):
        return None
    dest_dir.mkdir(parents=True, exist_ok=True)
    return store.fetch_reference(FetchRequest(config.name, dest_dir))


def _gate_mode(run: _Run, gate: GateRunner) -> int:
    ctx, console = run.ctx, run.console
    settings = _config(run)
    config_name, output_dir = settings.config_name, settings.output_dir
    if ctx.event_name == "pull_request_target":
        console.warning(
            "evalkit is running on pull_request_target: that event has a write token and "
            "secrets, so never check out and evaluate the PR's code there; use pull_request "
            "plus the workflow_run companion for forks",
            title="evalkit: unsafe trigger",
        )
    what = "baseline"  # which fetch failed, for the error
    try:
        store = _store(run, settings)
        # Only the GitHub stores keep baselines per commit (a file store needs no API).
        preferred = preferred_commits(run) if store.kind in ("artifact", "branch") else []
        baseline = store.fetch(FetchRequest(config_name, settings.output_dir, preferred))
        what = "reference"  # the drift checks' pinned reference, when one is needed
        reference = fetch_for_action(store, settings.config, settings.output_dir / "reference-in")
    except GitHubApiError as exc:
        hint = " (grant the job 'actions: read')" if isinstance(exc, GitHubPermissionError) else ""
        run.out(**{f"{what}_status": "error"})
        return _error_state(
            run,
            f"could not fetch the {what} from GitHub: {exc}{hint}",
            ExitCode.RUNTIME,
            title=f"evalkit: {what} unavailable",
        )
    except InputError as exc:
        run.out(**{f"{what}_status": "error"})
        return _error_state(run, str(exc), exc.exit_code, title=f"evalkit: unusable {what}")

    relation = _merge_base_relation(baseline, preferred)
    detail = baseline.detail
    if baseline.found:
        commit = (baseline.sha or "an unknown commit")[:12]
        merge_base = next((p.sha for p in preferred if p.why.startswith("the merge base")), None)
        if relation == "true":
            detail += f"; the baseline is from {commit}, the merge base"
        elif relation == "false" and merge_base:
            detail += (
                f"; the baseline is from {commit}, NOT the merge base {merge_base[:12]} (none was "
                "promoted for it yet), so base-branch changes since then count as the PR's"
            )
    run.out(
        baseline_status=baseline.status,
        baseline_source=baseline.source if baseline.found else "none",
        baseline_sha=baseline.sha or "",
        baseline_merge_base=relation,
    )
    _announce(
        console, "baseline", "vs_baseline", baseline, detail, blocking=settings.require_baseline
    )

    run.out(
        reference_status="none" if reference is None else reference.status,
        reference_source=reference.source if reference is not None and reference.found else "none",
        reference_sha=(reference.sha or "") if reference is not None else "",
    )
    if reference is not None:
        _announce(
            console,
            "reference",
            "drift",
            reference,
            reference.detail,
            blocking=settings.require_reference,
        )
    request = GateRequest(
        config_path=settings.config_path,
        config_name=config_name,
        config=settings.config,
        baseline_path=baseline.path,
        baseline_status=baseline.status,
        baseline_detail=detail,
        require_baseline=settings.require_baseline,
        output_dir=output_dir,
        details_url=run.details_url,
        reference=reference,
        store=store,
        require_reference=settings.require_reference,
    )
    result = _call_gate(run, gate, request)
    if isinstance(result, int):
        return result
    outcome = result
    _report_outputs(run, outcome)

    body = prepare_body(outcome.markdown, config_name)
    body_path = output_dir / COMMENT_BODY_FILE
    write_bytes_atomic(body_path, body.encode("utf-8"))
    run.outputs.setdefault("report-markdown", run.rel(body_path))
    if ctx.pull_request is not None:
        meta = {
            "config_name": config_name,
            "pr_number": ctx.pull_request.number,
            "head_sha": ctx.pull_request.head_sha,
            "repository": ctx.repository,
        }
        write_bytes_atomic(
            output_dir / COMMENT_META_FILE, json.dumps(meta, indent=2).encode("utf-8")
        )

    # The report's notes already say where the baseline came from.
    run.summary(f"{body}\n")
    for annotation in failing_check_annotations(
        outcome.failing_checks, outcome.checks_path, run.workspace
    ):
        console.annotate(annotation)
    console.line(
        f"evalkit: verdict {_safe_word(outcome.verdict)}, "
        f"{outcome.blocking_failures} blocking failure(s), exit {int(outcome.exit_code)}"
    )
    _maybe_comment(run, body, config_name)
    return run.finish(outcome.exit_code)


def _maybe_comment(run: _Run, body: str, config_name: str) -> None:
    ctx, console = run.ctx, run.console
    pr = ctx.pull_request
    if pr is None or not run.inputs.comment:
        run.outputs["comment"] = "off" if pr is not None else "not-a-pr"
        return
    if ctx.is_fork_pull_request:
        run.outputs["comment"] = "skipped-fork"
        console.notice(
            f"PR #{pr.number} comes from a fork, whose token cannot comment: the report is in "
            "the step summary and report-dir; the workflow_run companion posts the comment"
        )
        return
    try:
        result = upsert_sticky_comment(
            run.repo(),
            pr.number,
            body,
            config_name=config_name,
            identity=run.comment_identity(),
            retry=run.retry,
        )
    except GitHubPermissionError as exc:
        run.outputs["comment"] = "forbidden"
        console.warning(
            f"could not comment on PR #{pr.number}: {exc}; grant 'pull-requests: write' "
            "(the verdict is in the step summary)",
            title="evalkit: no PR comment",
        )
        return
    except GitHubApiError as exc:
        run.outputs["comment"] = "failed"
        console.warning(
            f"could not comment on PR #{pr.number}: {exc} (the verdict is in the step summary)",
            title="evalkit: no PR comment",
        )
        return
    run.outputs["comment"] = result.action
    run.outputs["comment-url"] = result.url
    console.line(f"evalkit: PR comment {result.action}: {result.url}")


def _promote_mode(run: _Run, gate: GateRunner) -> int:
    ctx, console = run.ctx, run.console
    settings = _config(run)
    config_name, output_dir = settings.config_name, settings.output_dir
    store = _store(run, settings)
    if store.kind == "none":
        raise ConfigError("mode: promote needs a baseline-store (artifact, branch or file)")
    if store.kind in ("artifact", "branch"):
        _, default_branch = run.repo_facts()
        if not (ctx.event_name == "push" and ctx.ref == f"refs/heads/{default_branch}"):
            raise ConfigError(
                f"mode: promote runs only on a push to {default_branch} (this run is a "
                f"{ctx.event_name or 'unknown'} event on {ctx.ref or 'an unknown ref'}); guard "
                "the step with if: github.event_name == 'push' && github.ref_name == "
                "github.event.repository.default_branch"
            )
    request = GateRequest(
        config_path=settings.config_path,
        config_name=config_name,
        # A promotion must not fail for lack of the baseline it is creating.
        config=settings.config.with_overrides(require_baseline=False, require_reference=False),
        baseline_path=None,
        baseline_status="none",
        baseline_detail="promotion runs the candidate without a baseline",
        require_baseline=False,
        output_dir=output_dir,
        details_url=run.details_url,
    )
    result = _call_gate(run, gate, request)
    if isinstance(result, int):
        return result
    outcome = result
    _report_outputs(run, outcome)
    if outcome.exit_code not in (ExitCode.OK, ExitCode.CHECK_FAILED):
        run.summary(outcome.markdown)
        console.error(
            f"the gate failed (exit {int(outcome.exit_code)}); nothing was promoted",
            title="evalkit: promotion skipped",
        )
        return run.finish(outcome.exit_code)
    candidate = outcome.candidate_path
    if candidate is None or not candidate.is_file():
        raise RuntimeFailure(
            "the gate produced no candidate artefact to promote (GateOutcome.candidate_path)"
        )
    promoted = store.promote(PromoteRequest(candidate, config_name, ctx.sha, output_dir))
    location = promoted.location
    if promoted.upload_dir is not None:
        run.outputs["baseline-path"] = run.rel(promoted.upload_dir)
        # The name to upload under: the one fetch looks for (baseline.name / input).
        run.outputs["baseline-name"] = settings.artifact_name
        location = run.rel(Path(promoted.location))
    detail = promoted.detail
    if promoted.upload_dir is not None:
        detail = f"baseline ready at {run.rel(promoted.upload_dir)}; {detail}"
    run.out(
        baseline_source=promoted.source,
        baseline_sha=promoted.sha or "",
        baseline_latest=promoted.latest,
        promoted_path=location,
    )
    if promoted.latest == "kept":
        console.warning(detail, title="evalkit: latest baseline kept")
    if outcome.exit_code == ExitCode.CHECK_FAILED:
        console.warning(
            f"checks fail on {ctx.ref}: promoted anyway, so PRs are compared with what the "
            "default branch really does",
            title="evalkit: promoted a failing run",
        )
    console.line(f"evalkit: {detail}")
    kept = (
        f"\n\n> **The latest baseline was not moved.** {_md_text(detail)}"
        if promoted.latest == "kept"
        else ""
    )
    run.summary(f"{outcome.markdown}{kept}\n\n<sub>evalkit: {_md_text(detail)}</sub>\n")
    return run.finish(ExitCode.OK)


# -- pinning the reference -----------------------------------------------------------------


def _tag_object(run: _Run, sha: str) -> dict[str, Any]:
    data: dict[str, Any] = call_github(
        f"read tag object {sha[:12]}",
        lambda: run.repo().get_git_tag(sha).raw_data,
        retry=run.retry,
    )
    return data


def api_tag_resolver(run: _Run) -> Callable[[str], TaggedCommit | None]:
    """Resolve a tag (or a release's tag) to its commit and time with the REST API."""
    from evalkit._store.history import TaggedCommit, parse_time

    def resolve(tag: str) -> TaggedCommit | None:
        try:
            ref: dict[str, Any] = call_github(
                f"read tag {tag}",
                lambda: run.repo().get_git_ref(f"tags/{tag}").raw_data,
                retry=run.retry,
            )
        except GitHubApiError as exc:
            if exc.status == 404:
                return None
            raise
        target = ref.get("object") or {}
        for _ in range(5):  # an annotated tag points at a tag object (maybe of a tag)
            if target.get("type") != "tag":
                break
            target = _tag_object(run, str(target.get("sha"))).get("object") or {}
        if target.get("type") != "commit" or not isinstance(target.get("sha"), str):
            return None
        sha = str(target["sha"])
        commit: dict[str, Any] = call_github(
            f"read commit {sha[:12]} of tag {tag}",
            lambda: run.repo().get_git_commit(sha).raw_data,
            retry=run.retry,
        )
        return TaggedCommit(sha, parse_time((commit.get("committer") or {}).get("date")))

    return resolve


def _pin_mode(run: _Run) -> int:
    from evalkit._store.history import parse_pin
    from evalkit._store.protocol import PinRequest

    ctx, console = run.ctx, run.console
    settings = _config(run)
    assert run.inputs.pin is not None  # ActionInputs requires it with mode: pin
    spec = parse_pin(run.inputs.pin, where="input pin")
    store = _store(run, settings)
    if store.kind == "none":
        raise ConfigError("mode: pin needs a baseline-store (artifact, branch or file)")
    if store.kind in ("artifact", "branch"):
        _, default_branch = run.repo_facts()
        on_default = ctx.ref == f"refs/heads/{default_branch}"
        if not (on_default and ctx.event_name in ("push", "workflow_dispatch")):
            # The reference judges every PR: only the default branch's own runs may move it.
            raise ConfigError(
                f"mode: pin runs only on {default_branch} (a push or a workflow_dispatch run; "
                f"this run is a {ctx.event_name or 'unknown'} event on "
                f"{ctx.ref or 'an unknown ref'})"
            )
    work = settings.output_dir / "history"
    pinned = store.pin(
        PinRequest(
            settings.config_name,
            spec,
            work,
            settings.output_dir,
            resolve_tag=api_tag_resolver(run),
        )
    )
    location = pinned.location
    if pinned.upload_dir is not None:
        run.outputs["reference-path"] = run.rel(pinned.upload_dir)
        run.outputs["reference-name"] = pinned.upload_name or ""
        location = run.rel(Path(pinned.location))
    elif pinned.source == "file":
        location = run.rel(Path(pinned.location))
        run.outputs["reference-path"] = location
    else:
        run.outputs["reference-path"] = location  # branch:path
    run.out(reference_source=pinned.source, reference_sha=pinned.record.sha or "")
    console.line(f"evalkit: pinned the reference ({location}): {pinned.detail}")
    run.summary(f"### evalkit: reference pinned\n\n{_md_text(pinned.detail)}\n")
    return run.finish(ExitCode.OK)


# -- the fork companion --------------------------------------------------------------------


def _read_bundle(report_dir: Path) -> tuple[dict[str, Any], str]:
    meta_path = report_dir / COMMENT_META_FILE
    body_path = report_dir / COMMENT_BODY_FILE
    for path in (meta_path, body_path):
        if not path.is_file() or path.is_symlink():
            raise InputError(
                f"{path}: missing; download the gate run's report-dir artifact into {report_dir}"
            )
        if path.stat().st_size > MAX_BUNDLE_BYTES:
            raise InputError(f"{path}: larger than {MAX_BUNDLE_BYTES} bytes; refusing it")
    try:
        meta = _bounded.loads(meta_path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InputError(f"{meta_path}: not valid JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise InputError(f"{meta_path}: expected a JSON object")
    number = meta.get("pr_number")
    if not isinstance(number, int) or isinstance(number, bool) or number <= 0:
        raise InputError(f"{meta_path}: pr_number must be a positive integer, got {number!r}")
    name = meta.get("config_name")
    if not isinstance(name, str):
        raise InputError(f"{meta_path}: config_name must be a string")
    validate_config_name(name)
    body = body_path.read_text(encoding="utf-8", errors="replace")
    return meta, body


_CONCLUSION_WORD = {
    "success": "passed",
    "failure": "FAILED",
    "cancelled": "was cancelled",
    "timed_out": "timed out",
    "action_required": "needs approval",
    "skipped": "was skipped",
    "neutral": "finished (neutral)",
    "stale": "is stale",
    "startup_failure": "failed to start",
}


def _with_trusted_conclusion(
    body: str, config_name: str, conclusion: str | None, run_id: int
) -> str:
    """Put the run's conclusion, from the trusted workflow_run payload, above the fork's text.

    The body was written by the fork's job and can claim anything ("PASS"); what the
    gate job really concluded comes from GitHub, not from the fork.
    """
    word = _CONCLUSION_WORD.get(conclusion or "", f"ended as {_safe_word(conclusion or 'unknown')}")
    banner = (
        f"> **evalkit (trusted):** the gate run {run_id} for this fork PR {word}"
        f" (workflow_run.conclusion: `{_safe_word(conclusion or 'unknown')}`). The report "
        "below was written by the fork's job.\n\n"
    )
    marker = marker_for(config_name)
    rest = body.removeprefix(marker).lstrip("\n")
    return prepare_body(f"{marker}\n{banner}{rest}", config_name)


def _post_from_dir(run: _Run, report_dir: Path) -> int:
    ctx, console = run.ctx, run.console
    wr = ctx.workflow_run
    if wr is None:
        raise ConfigError(
            "mode: comment must run on a workflow_run event (its payload is the trusted record "
            "of which commit the report belongs to)"
        )
    if wr.event != "pull_request":
        console.notice(f"the triggering run was a {wr.event or 'unknown'} event: no PR to comment")
        return run.finish(ExitCode.OK)
    bundles = _bundle_dirs(report_dir)
    codes = [_post_one_bundle(run, wr, bundle) for bundle in bundles]
    return run.finish(max(codes))


def _bundle_dirs(report_dir: Path) -> list[Path]:
    """The bundle in ``report_dir``, or one per config in its subfolders.

    download-artifact with ``pattern: evalkit-report-*`` puts each config's bundle in a
    folder named after its artifact.
    """
    if (report_dir / COMMENT_META_FILE).exists() or not report_dir.is_dir():
        return [report_dir]
    found = sorted(
        d for d in report_dir.iterdir() if d.is_dir() and (d / COMMENT_META_FILE).is_file()
    )
    return found or [report_dir]


def _post_one_bundle(run: _Run, wr: WorkflowRunInfo, report_dir: Path) -> int:
    ctx, console = run.ctx, run.console
    meta, body = _read_bundle(report_dir)
    number = int(meta["pr_number"])
    config_name = str(meta["config_name"])
    pr: dict[str, Any] = call_github(
        f"get PR #{number}", lambda: run.repo().get_pull(number).raw_data, retry=run.retry
    )
    head_sha = str((pr.get("head") or {}).get("sha") or "")
    base_repo = str(((pr.get("base") or {}).get("repo") or {}).get("full_name") or "")
    if head_sha != wr.head_sha or base_repo.lower() != ctx.repository.lower():
        run.outputs["comment"] = "refused"
        console.warning(
            f"not commenting: PR #{number} of {base_repo or '?'} is at {head_sha[:12] or '?'}, "
            f"but the run that made this report built {wr.head_sha[:12]} "
            "(a newer push, or a report claiming the wrong PR)",
            title="evalkit: comment refused",
        )
        return ExitCode.OK
    safe_body = sanitize_untrusted_body(body, config_name)
    safe_body = _with_trusted_conclusion(safe_body, config_name, wr.conclusion, wr.id)
    result = upsert_sticky_comment(
        run.repo(),
        number,
        safe_body,
        config_name=config_name,
        identity=run.comment_identity(),
        retry=run.retry,
    )
    run.out(comment=result.action, config_name=config_name)
    run.outputs["comment-url"] = result.url
    console.line(f"evalkit: PR comment {result.action}: {result.url}")
    return ExitCode.OK


# -- entry points --------------------------------------------------------------------------


def _retry_from_env(env: Mapping[str, str]) -> RetryPolicy:
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


def _start(
    env: Mapping[str, str],
    github_factory: GithubFactory | None,
    http_client: httpx.Client | None,
    stdout: TextIO | None,
    retry: RetryPolicy | None,
) -> tuple[_Run | None, Console]:
    console = Console(stdout if stdout is not None else sys.stdout)
    try:
        inputs = ActionInputs.from_env(env)
    except EvalkitError as exc:
        console.error(str(exc), title="evalkit: bad input")
        return None, console
    _mask_secrets(env, inputs, console)
    try:
        ctx = GitHubContext.from_env(env)
        policy = retry if retry is not None else _retry_from_env(env)
    except EvalkitError as exc:
        console.error(str(exc), title="evalkit: bad environment")
        return None, console
    run = _Run(
        env=env,
        inputs=inputs,
        ctx=ctx,
        console=console,
        github_factory=github_factory or default_github_factory,
        http_client=http_client,
        retry=policy,
    )
    return run, console


def run_action(
    env: Mapping[str, str],
    gate: GateRunner,
    *,
    github_factory: GithubFactory | None = None,
    http_client: httpx.Client | None = None,
    stdout: TextIO | None = None,
    retry: RetryPolicy | None = None,
) -> int:
    """Run the action as the container entrypoint does; return the process exit code."""
    run, _console = _start(env, github_factory, http_client, stdout, retry)
    if run is None:
        # Bad inputs: still leave verdict, exit-code and a summary line behind, so later
        # steps (and the job page) show "error", not empty outputs.
        output = env_path(env, "GITHUB_OUTPUT")
        if output is not None:
            code = str(int(ExitCode.INPUT))
            write_outputs(output, {"verdict": "error", "blocking-failures": "0", "exit-code": code})
        summary = env_path(env, "GITHUB_STEP_SUMMARY")
        if summary is not None:
            append_summary(
                summary,
                f"### evalkit: error (exit {int(ExitCode.INPUT)})\n\n"
                "bad action input (see the log)\n",
            )
        return ExitCode.INPUT
    try:
        if run.inputs.mode != "comment":
            _export_host_gateway(env)
        if run.inputs.mode == "promote":
            return _promote_mode(run, gate)
        if run.inputs.mode == "pin":
            return _pin_mode(run)
        if run.inputs.mode == "comment":
            return _post_from_dir(run, run.resolve(run.inputs.report_dir))
        return _gate_mode(run, gate)
    except EvalkitError as exc:
        return _error_state(run, str(exc), exc.exit_code, title=f"evalkit {run.inputs.mode} failed")
    except Exception as exc:
        # A bug (ours or a plugin's) must still leave outputs and a readable error behind,
        # so the workflow's later steps and the reviewer see "error", not silence.
        message = " ".join(f"{type(exc).__name__}: {exc}".split())
        return _error_state(
            run,
            f"internal error: {message}",
            ExitCode.RUNTIME,
            title=f"evalkit {run.inputs.mode} failed",
        )


def post_comment_from_dir(
    report_dir: Path,
    env: Mapping[str, str],
    *,
    github_factory: GithubFactory | None = None,
    stdout: TextIO | None = None,
    retry: RetryPolicy | None = None,
) -> int:
    """``evalkit comment --from DIR``: the fork companion, on a ``workflow_run`` event.

    The token comes from ``INPUT_GITHUB-TOKEN`` or ``GITHUB_TOKEN``. A relative
    ``report_dir`` is a command-line path, so it is relative to the working directory
    (a ``run:`` step may set ``working-directory``), not to ``GITHUB_WORKSPACE``.
    """
    merged = dict(env)
    merged["INPUT_MODE"] = "comment"
    merged["INPUT_REPORT-DIR"] = str(Path(report_dir).absolute())
    return run_action(
        merged,
        _no_gate,
        github_factory=github_factory,
        stdout=stdout,
        retry=retry,
    )


def _no_gate(_request: GateRequest) -> GateOutcome:
    raise AssertionError("comment mode never runs the gate")


__all__ = [
    "ActionInputs",
    "MODES",
    "Settings",
    "api_tag_resolver",
    "FailingCheck",
    "GateOutcome",
    "GateRequest",
    "GateRunner",
    "host_gateway",
    "failing_check_annotations",
    "find_check_line",
    "post_comment_from_dir",
    "resolve_settings",
    "run_action",
]
