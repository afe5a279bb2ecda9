"""``mode: promote`` (a push to the default branch): today's run becomes the baseline."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from evalkit._store.protocol import PromoteRequest, PromoteResult
from evalkit.action.contract import GateOutcome
from evalkit.action.skeleton import Job, ModeFlow, call_gate
from evalkit.errors import ConfigError, RuntimeFailure
from evalkit.exit_codes import ExitCode
from evalkit.github.context import GitHubContext
from evalkit.report.escape import md

if TYPE_CHECKING:
    from evalkit._spec.config import BaselineConfig


def on_a_push_to_a_promoting_branch(
    ctx: GitHubContext, default_branch: str, baseline: BaselineConfig
) -> None:
    """A GitHub store is promoted only by a push to a branch that promotes: the default
    branch, or one ``baseline.promote_branches`` names (docs/baselines-per-branch.md)."""
    branch = ctx.ref.removeprefix("refs/heads/") if ctx.ref.startswith("refs/heads/") else None
    if (
        ctx.event_name == "push"
        and branch is not None
        and baseline.promotes(branch, default_branch)
    ):
        return
    others = f" or {', '.join(baseline.promote_branches)}" if baseline.promote_branches else ""
    raise ConfigError(
        f"mode: promote runs only on a push to {default_branch}{others} (this run is a "
        f"{ctx.event_name or 'unknown'} event on {ctx.ref or 'an unknown ref'}); guard the "
        "step with if: github.event_name == 'push', and list other branches in the "
        "promote-branches input"
    )


def promote(job: Job) -> int:
    """The promote mode's work: gate without a baseline, then promote the candidate."""
    if job.settings.config.model.stop_early is not None:
        job.run.console.line(
            "evalkit: stop_early ignored: a promotion runs every case, since a baseline "
            "needs a row for every case (pull requests stop early)"
        )
    outcome = call_gate(
        job,
        # A promotion must not fail for lack of the baseline it is creating.
        config=job.settings.config.with_overrides(require_baseline=False, require_reference=False),
        baseline_path=None,
        baseline_status="none",
        baseline_detail="promotion runs the candidate without a baseline",
        stop_early=False,  # a stopped run is never promoted
    )
    if isinstance(outcome, int):
        return outcome
    run = job.run
    if outcome.exit_code not in (ExitCode.OK, ExitCode.CHECK_FAILED):
        run.summary(outcome.markdown)
        run.console.error(
            f"the gate failed (exit {int(outcome.exit_code)}); nothing was promoted",
            title="evalkit: promotion skipped",
        )
        return outcome.exit_code
    candidate = outcome.candidate_path
    if candidate is None or not candidate.is_file():
        raise RuntimeFailure(
            "the gate produced no candidate artefact to promote (GateOutcome.candidate_path)"
        )
    settings = job.settings
    promoted = job.store.promote(
        PromoteRequest(candidate, settings.config_name, run.ctx.sha, settings.output_dir)
    )
    _report_promotion(job, outcome, promoted)
    return ExitCode.OK


def _report_promotion(job: Job, outcome: GateOutcome, promoted: PromoteResult) -> None:
    run, console = job.run, job.run.console
    location, detail = promoted.location, promoted.detail
    if promoted.upload_dir is not None:
        run.outputs["baseline-path"] = run.rel(promoted.upload_dir)
        # The name to upload under: the one fetch looks for (baseline.name / input).
        run.outputs["baseline-name"] = job.settings.artifact_name
        location = run.rel(Path(promoted.location))
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
            f"checks fail on {run.ctx.ref}: promoted anyway, so PRs are compared with what the "
            "default branch really does",
            title="evalkit: promoted a failing run",
        )
    console.line(f"evalkit: {detail}")
    kept = (
        f"\n\n> **The latest baseline was not moved.** {md(detail)}"
        if promoted.latest == "kept"
        else ""
    )
    run.summary(f"{outcome.markdown}{kept}\n\n<sub>evalkit: {md(detail)}</sub>\n")


PROMOTE = ModeFlow("promote", promote, branch_rule=on_a_push_to_a_promoting_branch)
