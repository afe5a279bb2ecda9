"""``mode: comment``: the ``workflow_run`` companion that comments for a fork's PR, and the
report bundle a gate run leaves it (written by gate mode, read back here)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalkit._spec.config import validate_config_name
from evalkit._util import bounded as _bounded
from evalkit._util.atomic import write_bytes_atomic
from evalkit.action.session import ActionRun, safe_word
from evalkit.errors import ConfigError, InputError
from evalkit.exit_codes import ExitCode
from evalkit.github.client import call_github
from evalkit.github.comment import marker_for, prepare_body, sanitize_untrusted_body
from evalkit.github.context import GitHubContext, WorkflowRunInfo

COMMENT_BODY_FILE = "comment.md"
COMMENT_META_FILE = "comment.json"
# The most we read of a fork run's comment body (it is capped to 65,536 chars anyway).
MAX_BUNDLE_BYTES = 1024 * 1024


def write_bundle(ctx: GitHubContext, output_dir: Path, config_name: str, body: str) -> Path:
    """Write the comment body (always) and, on a PR, what it is for; return the body's path."""
    body_path = output_dir / COMMENT_BODY_FILE
    write_bytes_atomic(body_path, body.encode("utf-8"))
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
    return body_path


def read_bundle(report_dir: Path) -> tuple[dict[str, Any], str]:
    """The bundle's metadata (checked: a PR number, a config name) and its body."""
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


def bundle_dirs(report_dir: Path) -> list[Path]:
    """The bundle in ``report_dir``, or one per config in its subfolders."""
    if (report_dir / COMMENT_META_FILE).exists() or not report_dir.is_dir():
        return [report_dir]
    found = sorted(
        d for d in report_dir.iterdir() if d.is_dir() and (d / COMMENT_META_FILE).is_file()
    )
    return found or [report_dir]


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
