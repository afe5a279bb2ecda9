"""``mode: comment``: the ``workflow_run`` companion that comments for a fork's PR."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalkit.action.bundle import bundle_dirs, read_bundle
from evalkit.action.session import ActionRun, safe_word
from evalkit.errors import ConfigError
from evalkit.exit_codes import ExitCode
from evalkit.github.client import call_github
from evalkit.github.comment import marker_for, prepare_body, sanitize_untrusted_body
from evalkit.github.context import WorkflowRunInfo

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
    """Put the run's conclusion, from the trusted workflow_run payload, above the fork's text."""
    word = _CONCLUSION_WORD.get(conclusion or "", f"ended as {safe_word(conclusion or 'unknown')}")
    banner = (
        f"> **evalkit (trusted):** the gate run {run_id} for this fork PR {word}"
        f" (workflow_run.conclusion: `{safe_word(conclusion or 'unknown')}`). The report "
        "below was written by the fork's job.\n\n"
    )
    marker = marker_for(config_name)
    rest = body.removeprefix(marker).lstrip("\n")
    return prepare_body(f"{marker}\n{banner}{rest}", config_name)


def post_from_dir(run: ActionRun, report_dir: Path) -> int:
    """Post every bundle under ``report_dir`` (one per config); the worst exit code."""
    ctx, console = run.ctx, run.console
    wr = ctx.workflow_run
    if wr is None:
        raise ConfigError(
            "mode: comment must run on a workflow_run event (its payload is the trusted record "
            "of which commit the report belongs to)"
        )
    if wr.event != "pull_request":
        console.notice(f"the triggering run was a {wr.event or 'unknown'} event: no PR to comment")
        return ExitCode.OK
    bundles = bundle_dirs(report_dir)
    codes = [_post_one_bundle(run, wr, bundle) for bundle in bundles]
    return max(codes)


def _post_one_bundle(run: ActionRun, wr: WorkflowRunInfo, report_dir: Path) -> int:
    ctx, console = run.ctx, run.console
    meta, body = read_bundle(report_dir)
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
    run.out(config_name=config_name)
    run.post_comment(number, safe_body, config_name)
    return ExitCode.OK


__all__ = ["post_from_dir"]
