"""The sticky PR comment of ``mode: gate``: posted or updated, never the reason a step fails."""

from __future__ import annotations

from evalkit.action.session import ActionRun
from evalkit.github.comment import upsert_sticky_comment
from evalkit.github.errors import GitHubApiError, GitHubPermissionError


def maybe_comment(run: ActionRun, body: str, config_name: str) -> None:
    """Post or update this config's comment on the PR (off, not a PR, a fork: say so)."""
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
        post_comment(run, pr.number, body, config_name)
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


def post_comment(run: ActionRun, number: int, body: str, config_name: str) -> None:
    """Post or update this config's sticky comment on PR ``number``; say which, and where."""
    result = upsert_sticky_comment(
        run.repo(),
        number,
        body,
        config_name=config_name,
        identity=run.comment_identity(),
        retry=run.retry,
    )
    run.out(comment=result.action, comment_url=result.url)
    run.console.line(f"evalkit: PR comment {result.action}: {result.url}")


__all__ = ["maybe_comment", "post_comment"]
