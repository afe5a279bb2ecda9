"""The flow every configured mode shares: evalkit.yaml -> store -> the mode's work -> exit code."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from evalkit.action.contract import GateOutcome, GateRequest, GateRunner
from evalkit.action.inputs import Mode, Settings, resolve_settings
from evalkit.action.session import ActionRun, safe_word
from evalkit.errors import ConfigError, EvalkitError
from evalkit.github.comment import marker_for
from evalkit.report.escape import md

if TYPE_CHECKING:
    from pathlib import Path

    from evalkit._spec.config import BaselineConfig, LoadedConfig
    from evalkit._store.protocol import BaselineFetch, BaselineStore
    from evalkit.github.context import GitHubContext

# The stores that live on GitHub (a file store or none needs no API and no branch rule).
GITHUB_STORES = ("artifact", "branch")


@dataclass(frozen=True)
class Job:
    """What a mode's work receives: the run, evalkit.yaml as merged, its store, the gate."""

    run: ActionRun
    settings: Settings
    store: BaselineStore
    gate: GateRunner


@dataclass(frozen=True)
class ModeFlow:
    """One configured mode: its work, and whether it writes to the store."""

    name: Mode
    work: Callable[[Job], int]
    # the store's rule for a mode that writes to it (None: the mode only reads)
    branch_rule: Callable[[GitHubContext, str, BaselineConfig], None] | None = None


def run_mode(run: ActionRun, gate: GateRunner, flow: ModeFlow) -> int:
    """The skeleton: config, store, the store's rule for this mode, then the mode's work."""
    settings = open_config(run)
    if flow.name in ("gate", "promote"):  # the modes that run the target
        from evalkit.action.target_packages import install_target_packages

        install_target_packages(run)
    from evalkit._app.store_opening import open_config_store

    store = open_config_store(settings.config, run.access())  # with this run's GitHub access
    if flow.branch_rule is not None:
        if store.kind == "none":
            raise ConfigError(
                f"mode: {flow.name} needs a baseline-store (artifact, branch or file)"
            )
        if store.kind in GITHUB_STORES:
            _, default_branch = run.repo_facts()
            flow.branch_rule(run.ctx, default_branch, settings.config.baseline)
    return flow.work(Job(run, settings, store, gate))


def open_config(run: ActionRun) -> Settings:
    """evalkit.yaml with the inputs merged in; its name and report folder become outputs."""
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


def error_state(run: ActionRun, message: str, exit_code: int, *, title: str) -> int:
    """Fail the step visibly everywhere: annotation, outputs, summary and the PR comment."""
    run.console.error(message, title=title)
    run.outputs.setdefault("verdict", "error")
    run.outputs.setdefault("blocking-failures", "0")
    text = md(message)
    run.summary(f"### evalkit: error\n\n{text}\n")
    if run.config_name is not None and run.inputs.mode == "gate":
        body = (
            f"{marker_for(run.config_name)}\n### evalkit: error (exit {int(exit_code)})\n\n"
            f"The gate could not decide: {text}\n\nAny earlier verdict on this PR no longer "
            "applies.\n"
        )
        if run.details_url:
            body += f"\n[Workflow run]({run.details_url})\n"
        run.maybe_comment(body, run.config_name)
    return exit_code


def call_gate(
    job: Job,
    *,
    config: LoadedConfig,
    baseline_path: Path | None,
    baseline_status: Literal["found", "missing", "expired", "none"],
    baseline_detail: str,
    stop_early: bool,
    reference: BaselineFetch | None = None,
    store: BaselineStore | None = None,
) -> GateOutcome | int:
    """Ask the gate (with this job's config name, report folder and run page, and what the
    mode decided): its outcome with its report outputs set, or the exit code of its error."""
    run, settings = job.run, job.settings
    request = GateRequest(
        config_name=settings.config_name,
        config=config,
        baseline_path=baseline_path,
        baseline_status=baseline_status,
        baseline_detail=baseline_detail,
        output_dir=settings.output_dir,
        details_url=run.details_url,
        reference=reference,
        store=store,
        isolate_target=run.inputs.isolate_target,
        stop_early=stop_early,
        log=run.console.line,
    )
    try:
        outcome = job.gate(request)
    except EvalkitError as exc:
        return error_state(run, str(exc), exc.exit_code, title="evalkit gate error")
    run.out(
        verdict=safe_word(outcome.verdict),
        blocking_failures=str(outcome.blocking_failures),
    )
    for kind, path in outcome.report_paths.items():
        key = re.sub(r"[^a-z0-9]+", "-", kind.lower()).strip("-")
        if key:
            run.outputs[f"report-{key}"] = run.rel(path)
    if outcome.candidate_path is not None:
        run.outputs["candidate-path"] = run.rel(outcome.candidate_path)
    return outcome
