"""The ``isolate-target`` input: the action's python target without the job's token (#25).

``evalkit action`` runs as a subprocess with the runner's environment (``INPUT_*`` with
hyphens kept, the token in ``INPUT_GITHUB-TOKEN`` and ``GITHUB_TOKEN``) against the fake
GitHub. The target is a probe that fails its case when it can find the token in its
environment, its ``/proc/self/environ`` or its parent's; with ``isolate-target: true`` the
gate passes and the comment is posted, without it the same probe finds the token (the
control).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from actions_job import Job, make_job, pr_payload
from fake_github import (  # noqa: F401  (the *_fixture name registers the fixture)
    FakeGitHub,
    fake_github_fixture,
)

from evalkit.action.inputs import ActionInputs
from evalkit.errors import ConfigError
from helpers.isolation import make_readable, parent_python, readable_folder

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux (prctl)")

PROBE = """
import os, sys


def make(token):

    def probe(case):
        places = {"os.environ": "\\n".join(os.environ.values())}
        with open("/proc/self/environ", "rb") as f:
            places["/proc/self/environ"] = f.read().decode("utf-8", "replace")
        try:
            with open(f"/proc/{os.getppid()}/environ", "rb") as f:
                places["the parent's environ"] = f.read().decode("utf-8", "replace")
        except OSError:
            pass
        leaks = sorted(where for where, text in places.items() if token in text)
        print(f"probe: token found in {leaks}" if leaks else "probe: no token", file=sys.stderr)
        if leaks:
            raise RuntimeError(f"token readable in {leaks}")
        return ["a"]

    return probe
"""
# The probe learns what to look for from its factory's arguments: through the environment,
# the value itself would be in the child's environment.
FILES = {
    "evals/evalkit.yaml": (
        "name: probe\ngoldens: goldens.jsonl\nchecks: checks.yaml\nmetrics: [recall@1]\n"
        "target:\n  python: 'probe:make'\n  args: {token: TOKEN}\n"
    ),
    "evals/checks.yaml": "checks:\n  - {id: floor, metric: recall@1, op: '>=', threshold: 1}\n",
    "evals/goldens.jsonl": '{"id": "q1", "query": "anything", "relevant": ["a"]}\n',
    "evals/probe.py": PROBE,
}


@pytest.fixture(name="folder")
def folder_fixture() -> Iterator[Path]:
    with readable_folder() as folder:
        yield folder


def run(job: Job) -> subprocess.CompletedProcess[str]:
    config = job.workspace / "evals" / "evalkit.yaml"
    config.write_text(config.read_text().replace("TOKEN", job.env["INPUT_GITHUB-TOKEN"]))
    make_readable(job.workspace)
    python, extra = parent_python()
    token = job.env["INPUT_GITHUB-TOKEN"]
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        **extra,
        **job.env,
        "GITHUB_TOKEN": token,
    }
    return subprocess.run(
        [python, "-m", "evalkit", "action"],
        env=env,
        cwd=job.workspace,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_isolated_target_gates_without_the_token(fake_github: FakeGitHub, folder: Path) -> None:
    job = make_job(
        fake_github, folder / "job", "pull_request", pr_payload(fake_github),
        files=FILES, isolate_target="true", baseline_store="none",
    )  # fmt: skip
    done = run(job)
    log = done.stdout + done.stderr
    assert "probe: no token" in log, log
    assert done.returncode == 0, log
    assert job.outputs()["verdict"] == "pass"
    assert len(fake_github.comment_bodies(7)) == 1


def test_in_process_the_probe_finds_the_token(fake_github: FakeGitHub, folder: Path) -> None:
    """Control: the same job without isolate-target fails its case on the token."""
    job = make_job(
        fake_github, folder / "job", "pull_request", pr_payload(fake_github),
        files=FILES, baseline_store="none",
    )  # fmt: skip
    done = run(job)
    log = done.stdout + done.stderr
    assert "probe: token found in ['/proc/self/environ', 'os.environ']" in log, log
    assert done.returncode != 0


def test_isolate_target_refuses_plugins(fake_github: FakeGitHub, folder: Path) -> None:
    files = {**FILES, "evals/evalkit.yaml": FILES["evals/evalkit.yaml"] + "plugins: [probe]\n"}
    job = make_job(
        fake_github, folder / "job", "pull_request", pr_payload(fake_github),
        files=files, isolate_target="true", baseline_store="none",
    )  # fmt: skip
    done = run(job)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "plugins are imported into the action's own process" in done.stdout + done.stderr


@pytest.mark.parametrize(("raw", "want"), [("", False), ("true", True), ("False", False)])
def test_the_input_is_a_boolean(raw: str, want: bool) -> None:
    env = {"INPUT_ISOLATE-TARGET": raw} if raw else {}
    assert ActionInputs.from_env(env).isolate_target is want


def test_a_bad_value_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "environ", {})
    with pytest.raises(ConfigError, match="input isolate-target: expected true or false"):
        ActionInputs.from_env({"INPUT_ISOLATE-TARGET": "sometimes"})
