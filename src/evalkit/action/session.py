"""One run of the Action: its inputs, the event, the log, GitHub, and the outputs it collects;
and the container's place on the runner (the host's address, handing files back)."""

from __future__ import annotations

import functools
import os
import re
import socket
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit._store.protocol import GitHubAccess
from evalkit.action.inputs import ActionInputs
from evalkit.github.client import (
    GitHubApiError,
    GithubFactory,
    GitHubPermissionError,
    RetryPolicy,
    call_github,
)
from evalkit.github.comment import GITHUB_ACTIONS_BOT, upsert_sticky_comment
from evalkit.github.context import GitHubContext
from evalkit.github.outputs import (
    Console,
    append_summary,
    env_path,
    relative_to_workspace,
    write_outputs,
)

if TYPE_CHECKING:
    import httpx
    from github.Repository import Repository

    from github import Github

HOST_GATEWAY_VAR = "EVALKIT_HOST_GATEWAY"


def host_gateway(route_table: Path = Path("/proc/net/route")) -> str | None:
    """The container's default gateway (the runner host, seen from the action container)."""
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


def export_host_gateway(env: Mapping[str, str]) -> None:
    # The gate expands ${ENV} in evalkit.yaml from the process environment.
    if HOST_GATEWAY_VAR not in env and HOST_GATEWAY_VAR not in os.environ:
        gateway = host_gateway()
        if gateway:
            os.environ[HOST_GATEWAY_VAR] = gateway


def hand_back(folder: Path, workspace: Path) -> None:
    """Give what the action wrote under ``folder`` to the workspace's owner."""
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


_SAFE_WORD = re.compile(r"^[A-Za-z0-9._-]{1,40}$")


def safe_word(value: str) -> str:
    """A word from outside (a verdict, a run's conclusion) fit for an output or the log."""
    return value if _SAFE_WORD.match(value) else "unknown"


@dataclass
class ActionRun:
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

    @functools.cached_property
    def _github(self) -> Github:
        return self.github_factory(self.ctx.api_url, self.inputs.token)

    def repo(self) -> Repository:
        return self._github.get_repo(self.ctx.repository)

    def comment_identity(self) -> str:
        """The login whose marked comment is ours: the input, else the token's own user."""
        if self.inputs.comment_author:
            return self.inputs.comment_author
        if self._identity is None:
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

    def maybe_comment(self, body: str, config_name: str) -> None:
        """Post or update this config's comment on the PR (off, not a PR, a fork: say so);
        failing to comment never fails the step."""
        pr, console = self.ctx.pull_request, self.console
        if pr is None or not self.inputs.comment:
            self.outputs["comment"] = "off" if pr is not None else "not-a-pr"
            return
        if self.ctx.is_fork_pull_request:
            self.outputs["comment"] = "skipped-fork"
            console.notice(
                f"PR #{pr.number} comes from a fork, whose token cannot comment: the report is "
                "in the step summary and report-dir; the workflow_run companion posts the comment"
            )
            return
        try:
            self.post_comment(pr.number, body, config_name)
        except GitHubPermissionError as exc:
            self.outputs["comment"] = "forbidden"
            console.warning(
                f"could not comment on PR #{pr.number}: {exc}; grant 'pull-requests: write' "
                "(the verdict is in the step summary)",
                title="evalkit: no PR comment",
            )
        except GitHubApiError as exc:
            self.outputs["comment"] = "failed"
            console.warning(
                f"could not comment on PR #{pr.number}: {exc} (the verdict is in the step summary)",
                title="evalkit: no PR comment",
            )

    def post_comment(self, number: int, body: str, config_name: str) -> None:
        """Post or update this config's sticky comment on PR ``number``; say which, and where."""
        result = upsert_sticky_comment(
            self.repo(),
            number,
            body,
            config_name=config_name,
            identity=self.comment_identity(),
            retry=self.retry,
        )
        self.out(comment=result.action, comment_url=result.url)
        self.console.line(f"evalkit: PR comment {result.action}: {result.url}")

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
