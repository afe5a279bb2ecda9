"""``mode: gate`` (pull requests, or any event): baseline and reference in, verdict out."""

from __future__ import annotations

from evalkit._store.protocol import BaselineFetch, FetchRequest, Preferred
from evalkit.action.annotations import failing_check_annotations
from evalkit.action.baseline import fetch_for_action, merge_base_relation, preferred_commits
from evalkit.action.bundle import write_bundle
from evalkit.action.contract import GateOutcome
from evalkit.action.pr_comment import maybe_comment
from evalkit.action.session import ActionRun, safe_word
from evalkit.action.skeleton import (
    GITHUB_STORES,
    Job,
    ModeFlow,
    call_gate,
    error_state,
)
from evalkit.errors import InputError
from evalkit.exit_codes import ExitCode
from evalkit.github.comment import prepare_body
from evalkit.github.errors import GitHubApiError, GitHubPermissionError

Fetched = tuple[BaselineFetch, list[Preferred], BaselineFetch | None]


def gate(job: Job) -> int:
    """The gate mode's work (the skeleton has read the config and opened the store)."""
    _warn_on_unsafe_trigger(job.run)
    fetched = _fetch(job)
    if isinstance(fetched, int):
        return fetched
    baseline, preferred, reference = fetched
    detail = _baseline_outputs(job, baseline, preferred)
    _reference_outputs(job, reference)
    settings = job.settings
    outcome = call_gate(
        job,
        config=settings.config,
        baseline_path=baseline.path,
        baseline_status=baseline.status,
        baseline_detail=detail,
        stop_early=True,  # stop_early: in evalkit.yaml stops the run as `evalkit gate` does
        reference=reference,
        store=job.store,
    )
    if isinstance(outcome, int):
        return outcome
    return _publish(job, outcome)


def _warn_on_unsafe_trigger(run: ActionRun) -> None:
    if run.ctx.event_name == "pull_request_target":
        run.console.warning(
            "evalkit is running on pull_request_target: that event has a write token and "
            "secrets, so never check out and evaluate the PR's code there; use pull_request "
            "plus the workflow_run companion for forks",
            title="evalkit: unsafe trigger",
        )


def _fetch(job: Job) -> Fetched | int:
    """(baseline, the commits it was preferred from, reference), or the exit code of a failure."""
    run, settings, store = job.run, job.settings, job.store
    config_name, output_dir = settings.config_name, settings.output_dir
    what = "baseline"  # which fetch failed, for the error
    try:
        # Only the GitHub stores keep baselines per commit (a file store needs no API).
        preferred = preferred_commits(run) if store.kind in GITHUB_STORES else []
        pr = run.ctx.pull_request
        branch = pr.base_ref if pr is not None and pr.base_ref else None
        baseline = store.fetch(FetchRequest(config_name, output_dir, preferred, branch))
        what = "reference"  # the drift checks' pinned reference, when one is needed
        checks_path = settings.config.resolve(settings.config.model.checks)
        reference = fetch_for_action(store, checks_path, config_name, output_dir / "reference-in")
    except GitHubApiError as exc:
        hint = " (grant the job 'actions: read')" if isinstance(exc, GitHubPermissionError) else ""
        run.out(**{f"{what}_status": "error"})
        return error_state(
            run,
            f"could not fetch the {what} from GitHub: {exc}{hint}",
            ExitCode.RUNTIME,
            title=f"evalkit: {what} unavailable",
        )
    except InputError as exc:
        run.out(**{f"{what}_status": "error"})
        return error_state(run, str(exc), exc.exit_code, title=f"evalkit: unusable {what}")
    return baseline, preferred, reference


def _baseline_outputs(job: Job, baseline: BaselineFetch, preferred: list[Preferred]) -> str:
    """Say which baseline the PR is compared with; return the sentence the report notes."""
    relation, detail = merge_base_relation(baseline, preferred)
    blocking = job.settings.require_baseline
    _say_fetched(job, "baseline", "vs_baseline", baseline, detail, blocking=blocking)
    job.run.out(baseline_merge_base=relation)
    return detail


def _reference_outputs(job: Job, reference: BaselineFetch | None) -> None:
    if reference is None:
        job.run.out(reference_status="none", reference_source="none", reference_sha="")
        return
    blocking = job.settings.require_reference
    _say_fetched(job, "reference", "drift", reference, reference.detail, blocking=blocking)


def _say_fetched(
    job: Job, what: str, checks: str, fetch: BaselineFetch, detail: str, *, blocking: bool
) -> None:
    """A fetched baseline or reference: its outputs, and a notice, or why there is none."""
    source = fetch.source if fetch.found else "none"
    job.run.out(
        **{f"{what}_status": fetch.status, f"{what}_source": source, f"{what}_sha": fetch.sha or ""}
    )
    console = job.run.console
    if fetch.found:
        console.notice(f"evalkit {what}: {detail}")
        return
    why = f" — blocking: require-{what} is on" if blocking else ""
    console.warning(
        f"no {what} ({fetch.status}): {fetch.detail}; {checks} checks report no-{what}{why}",
        title=f"evalkit: no {what}",
    )


def _publish(job: Job, outcome: GateOutcome) -> int:
    """Bundle, summary, annotations, log line and PR comment; the gate's exit code."""
    run, config_name = job.run, job.settings.config_name
    body = prepare_body(outcome.markdown, config_name)
    body_path = write_bundle(run.ctx, job.settings.output_dir, config_name, body)
    run.outputs.setdefault("report-markdown", run.rel(body_path))
    # The report's notes already say where the baseline came from.
    run.summary(f"{body}\n")
    for annotation in failing_check_annotations(
        outcome.failing_checks, outcome.checks_path, run.workspace
    ):
        run.console.annotate(annotation)
    run.console.line(
        f"evalkit: verdict {safe_word(outcome.verdict)}, "
        f"{outcome.blocking_failures} blocking failure(s), exit {int(outcome.exit_code)}"
    )
    maybe_comment(run, body, config_name)
    return outcome.exit_code


GATE = ModeFlow("gate", gate)

__all__ = ["GATE", "gate"]
