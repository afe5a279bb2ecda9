"""``mode: gate`` (pull requests, or any event): baseline and reference in, verdict out."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalkit._store.protocol import BaselineFetch, BaselineStore, FetchRequest, Preferred
from evalkit.action.comment_mode import write_bundle
from evalkit.action.contract import FailingCheck, GateOutcome
from evalkit.action.session import ActionRun, safe_word
from evalkit.action.skeleton import (
    GITHUB_STORES,
    Job,
    ModeFlow,
    call_gate,
    error_state,
)
from evalkit.errors import CheckError, InputError
from evalkit.exit_codes import ExitCode
from evalkit.github.client import GitHubApiError, GitHubPermissionError, call_github
from evalkit.github.comment import prepare_body
from evalkit.github.outputs import MAX_ERROR_ANNOTATIONS, Annotation, relative_to_workspace

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
        preferred = _preferred_commits(run) if store.kind in GITHUB_STORES else []
        pr = run.ctx.pull_request
        branch = pr.base_ref if pr is not None and pr.base_ref else None
        baseline = store.fetch(FetchRequest(config_name, output_dir, preferred, branch))
        what = "reference"  # the drift checks' pinned reference, when one is needed
        checks_path = settings.config.resolve(settings.config.model.checks)
        reference = _fetch_reference(store, checks_path, config_name, output_dir / "reference-in")
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
    relation, detail = _merge_base_relation(baseline, preferred)
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
    run.maybe_comment(body, config_name)
    return outcome.exit_code


# -- which baseline a PR wants, and the reference its drift checks want ------------------


def _merge_base(run: ActionRun) -> str | None:
    """The first parent of the PR's merge commit: the base commit the candidate was built on."""
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


def _preferred_commits(run: ActionRun) -> list[Preferred]:
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


def _merge_base_relation(
    baseline: BaselineFetch, preferred: Sequence[Preferred]
) -> tuple[str, str]:
    """Is the baseline from the commit the merge ref was built on (true / false / unknown),
    and the store's sentence on the baseline saying so."""
    merge_base = next((p.sha for p in preferred if p.why.startswith("the merge base")), None)
    if merge_base is None or not baseline.found:
        return "unknown", baseline.detail
    said = f"{baseline.detail}; the baseline is from {(baseline.sha or 'an unknown commit')[:12]}"
    if baseline.sha == merge_base:
        return "true", f"{said}, the merge base"
    return "false", (
        f"{said}, NOT the merge base {merge_base[:12]} (none was promoted for it yet), so "
        "base-branch changes since then count as the PR's"
    )


def _fetch_reference(
    store: BaselineStore, checks_path: Path, config_name: str, dest_dir: Path
) -> BaselineFetch | None:
    """The store's pinned reference, when a check needs it (a checks file that does not load
    is left for the gate to report: None here)."""
    from evalkit._spec.checks import load_checks_file
    from evalkit.gate.reference import wants_reference

    try:
        checks = load_checks_file(checks_path).checks
    except CheckError:
        return None
    if not wants_reference(checks):
        return None
    dest_dir.mkdir(parents=True, exist_ok=True)
    return store.fetch_reference(FetchRequest(config_name, dest_dir))


# -- ``::error`` annotations for the failing checks, on their lines of the checks file ---


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


GATE = ModeFlow("gate", gate)
