"""``mode: pin`` (a push or a manual run on the default branch): choose the drift reference."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.action.session import ActionRun
from evalkit.action.skeleton import Job, ModeFlow
from evalkit.errors import ConfigError
from evalkit.exit_codes import ExitCode
from evalkit.github.client import GitHubApiError, call_github
from evalkit.github.context import GitHubContext
from evalkit.report.escape import md

if TYPE_CHECKING:
    from evalkit._spec.config import BaselineConfig
    from evalkit._store.history import TaggedCommit


def on_default_branch(
    ctx: GitHubContext,
    default_branch: str,
    baseline: BaselineConfig | None = None,  # noqa: ARG001 (promote_branches never pin)
) -> None:
    """The reference judges every PR: only the default branch's own runs may move it."""
    on_default = ctx.ref == f"refs/heads/{default_branch}"
    if not (on_default and ctx.event_name in ("push", "workflow_dispatch")):
        raise ConfigError(
            f"mode: pin runs only on {default_branch} (a push or a workflow_dispatch run; "
            f"this run is a {ctx.event_name or 'unknown'} event on "
            f"{ctx.ref or 'an unknown ref'})"
        )


def api_tag_resolver(run: ActionRun) -> Callable[[str], TaggedCommit | None]:
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
            tag_sha = str(target.get("sha"))
            tag_object: dict[str, Any] = call_github(
                f"read tag object {tag_sha[:12]}",
                lambda: run.repo().get_git_tag(tag_sha).raw_data,  # noqa: B023 (called at once)
                retry=run.retry,
            )
            target = tag_object.get("object") or {}
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


def pin(job: Job) -> int:
    """The pin mode's work: pin the promotion the input names; say where and which."""
    from evalkit._store.history import parse_pin
    from evalkit._store.protocol import PinRequest

    run, settings = job.run, job.settings
    assert run.inputs.pin is not None  # ActionInputs requires it with mode: pin
    spec = parse_pin(run.inputs.pin, where="input pin")
    work = settings.output_dir / "history"
    pinned = job.store.pin(
        PinRequest(
            settings.config_name,
            spec,
            work,
            settings.output_dir,
            resolve_tag=api_tag_resolver(run),
        )
    )
    # a branch's location is branch:path; an artifact's or a file's, a path
    location = pinned.location if pinned.source == "branch" else run.rel(Path(pinned.location))
    run.outputs["reference-path"] = run.rel(pinned.upload_dir) if pinned.upload_dir else location
    if pinned.upload_dir is not None:
        run.outputs["reference-name"] = pinned.upload_name or ""
    run.out(reference_source=pinned.source, reference_sha=pinned.record.sha or "")
    run.console.line(f"evalkit: pinned the reference ({location}): {pinned.detail}")
    run.summary(f"### evalkit: reference pinned\n\n{md(pinned.detail)}\n")
    return ExitCode.OK


PIN = ModeFlow("pin", pin, branch_rule=on_default_branch)
