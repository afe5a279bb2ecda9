"""A simulated GitHub Actions job for the action's tests: workspace, runner files, env.

``make_job`` lays out a workspace (evals/evalkit.yaml, evals/checks.yaml, or the files
given), an event payload and the runner's GITHUB_OUTPUT / GITHUB_STEP_SUMMARY files, and
returns the environment the container would see. ``Job.run`` drives ``run_action``
in-process; an end-to-end test can instead pass ``job.env`` to the installed
``evalkit action`` entrypoint and read ``job.outputs()`` / ``job.summary()`` after.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from fake_github import FakeGitHub, github_factory_for_tests

from evalkit.action.contract import GateRunner
from evalkit.action.run import run_action
from evalkit.github.client import NO_DELAY

BASE_SHA = "b" * 40
HEAD_SHA = "c" * 40
CHECKS = """\
checks:
  - id: recall_floor
    metric: recall@10
    op: ">="
    threshold: 0.6

  - id: "no_ndcg_regression"   # quoted id
    metric: ndcg@10
    vs_baseline: no_significant_regression
"""
DEFAULT_FILES = {
    "evals/evalkit.yaml": (
        "name: evals-evalkit\ngoldens: goldens.jsonl\nchecks: checks.yaml\n"
        "metrics: [recall@10, ndcg@10]\ntarget:\n  python: 'evals_target:make'\n"
    ),
    "evals/checks.yaml": CHECKS,
}


def parse_github_output(text: str) -> dict[str, str]:
    """Parse $GITHUB_OUTPUT the way the runner does (name<<DELIM ... DELIM)."""
    outputs: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line:
            i += 1
            continue
        m = re.fullmatch(r"([^<=]+)<<(.+)", line)
        assert m, f"not heredoc form: {line!r}"
        name, delim = m.groups()
        j = lines.index(delim, i + 1)
        outputs[name] = "\n".join(lines[i + 1 : j])
        i = j + 1
    return outputs


@dataclass
class Job:
    """One simulated Actions job: workspace, runner files, environment, captured log."""

    fake: FakeGitHub
    tmp: Path
    env: dict[str, str]
    stdout: io.StringIO = field(default_factory=io.StringIO)

    @property
    def workspace(self) -> Path:
        return Path(self.env["GITHUB_WORKSPACE"])

    def outputs(self) -> dict[str, str]:
        path = Path(self.env["GITHUB_OUTPUT"])
        return parse_github_output(path.read_text()) if path.exists() else {}

    def summary(self) -> str:
        path = Path(self.env["GITHUB_STEP_SUMMARY"])
        return path.read_text() if path.exists() else ""

    def run(self, gate: GateRunner, http: httpx.Client | None = None) -> int:
        self.stdout = io.StringIO()
        return run_action(
            self.env,
            gate,
            github_factory=github_factory_for_tests,
            http_client=http,
            stdout=self.stdout,
            retry=NO_DELAY,
        )

    def log(self) -> str:
        return self.stdout.getvalue()


def pr_payload(fake: FakeGitHub, *, fork: bool = False, number: int = 7) -> dict[str, Any]:
    """A ``pull_request`` event payload for PR ``number`` (from a fork if asked)."""
    head_repo = (
        {"id": 9999, "full_name": "mallory/widgets"}
        if fork
        else {"id": fake.repo_id, "full_name": fake.full_name}
    )
    return {
        "number": number,
        "pull_request": {
            "number": number,
            "base": {"sha": BASE_SHA, "ref": "main", "repo": {"id": fake.repo_id}},
            "head": {"sha": HEAD_SHA, "ref": "feature", "repo": head_repo},
        },
        "repository": {"id": fake.repo_id, "full_name": fake.full_name, "default_branch": "main"},
    }


def push_payload(fake: FakeGitHub) -> dict[str, Any]:
    """A ``push`` event payload (to the default branch when GITHUB_REF says so)."""
    return {
        "repository": {"id": fake.repo_id, "full_name": fake.full_name, "default_branch": "main"}
    }


def make_job(
    fake: FakeGitHub,
    tmp_path: Path,
    event: str,
    payload: dict[str, Any],
    *,
    files: Mapping[str, str] = DEFAULT_FILES,
    **inputs: str,
) -> Job:
    """Workspace + runner files + environment for one job; ``inputs`` become INPUT_*."""
    workspace = tmp_path / "workspace"
    for rel, text in files.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text)
    workspace.mkdir(parents=True, exist_ok=True)
    runner = tmp_path / "runner"
    runner.mkdir(exist_ok=True)
    (runner / "event.json").write_text(json.dumps(payload))
    env = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_REPOSITORY": fake.full_name,
        "GITHUB_REPOSITORY_ID": str(fake.repo_id),
        "GITHUB_API_URL": fake.api_url,
        "GITHUB_SERVER_URL": "https://github.example",
        "GITHUB_EVENT_NAME": event,
        "GITHUB_EVENT_PATH": str(runner / "event.json"),
        "GITHUB_SHA": "d" * 40,
        "GITHUB_RUN_ID": "31337",
        "GITHUB_REF": "refs/heads/main" if event == "push" else "refs/pull/7/merge",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_OUTPUT": str(runner / "output"),
        "GITHUB_STEP_SUMMARY": str(runner / "summary.md"),
        "INPUT_CONFIG": "evals/evalkit.yaml",
        "INPUT_GITHUB-TOKEN": fake.token,
        # Present, so run_action does not export the real gateway into os.environ.
        "EVALKIT_HOST_GATEWAY": "127.0.0.1",
        # Subprocess runs against the fake retry without waiting out the real backoff.
        "EVALKIT_GITHUB_RETRY_DELAY": "0",
    }
    env.update({f"INPUT_{k.upper().replace('_', '-')}": v for k, v in inputs.items()})
    return Job(fake, tmp_path, env)


__all__ = [
    "BASE_SHA",
    "CHECKS",
    "HEAD_SHA",
    "Job",
    "make_job",
    "parse_github_output",
    "pr_payload",
    "push_payload",
]
