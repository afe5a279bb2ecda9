"""``target-requirements`` / ``target-project``: a python target's own packages (docs/action.md).

``evalkit action`` runs as a subprocess with the real gate against the fake GitHub. The
target imports a package that only a wheel in the workspace holds (installed with pip,
offline: the requirements file says ``--no-index --find-links``). With the input the gate
passes, in process and under ``isolate-target``; without it the same target cannot
import its package (the control); a package that disagrees with evalkit's own pins is one
line, exit 2, before the target runs.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from actions_job import Job, make_job, pr_payload
from fake_github import (  # noqa: F401  (the *_fixture name registers the fixture)
    FakeGitHub,
    fake_github_fixture,
)
from test_github_isolate_target import run

from evalkit.action.inputs import ActionInputs
from helpers.isolation import make_readable, readable_folder
from helpers.wheels import build_wheel

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux")

FILES = {
    "evals/evalkit.yaml": (
        "name: deps\ngoldens: goldens.jsonl\nchecks: checks.yaml\nmetrics: [recall@1]\n"
        "target:\n  python: 'dep_target:make'\n"
    ),
    "evals/checks.yaml": "checks:\n  - {id: floor, metric: recall@1, op: '>=', threshold: 1}\n",
    "evals/goldens.jsonl": '{"id": "q1", "query": "anything", "relevant": ["a"]}\n',
    # The target's own package, importable only once installed.
    "evals/dep_target.py": (
        "import evalkit_fixture_dep\n\n\ndef make():\n"
        "    return lambda case: evalkit_fixture_dep.ANSWER\n"
    ),
    "evals/requirements.txt": "--no-index\n--find-links wheels\nevalkit_fixture_dep==1.0\n",
    "evals/clash.txt": "--no-index\n--find-links wheels\nevalkit_fixture_clash==1.0\n",
}


@pytest.fixture(name="folder")
def folder_fixture() -> Iterator[Path]:
    with readable_folder() as folder:
        yield folder


def job_with(fake: FakeGitHub, folder: Path, **inputs: str) -> Job:
    job = make_job(
        fake, folder / "job", "pull_request", pr_payload(fake),
        files=FILES, baseline_store="none",
    )  # fmt: skip
    for name, value in inputs.items():
        job.env[f"INPUT_{name.upper().replace('_', '-')}"] = value
    wheels = job.workspace / "evals" / "wheels"
    dep = {"evalkit_fixture_dep/__init__.py": "ANSWER = ['a']\n"}
    build_wheel(wheels, "evalkit_fixture_dep", "1.0", dep)
    # Needs a PyYAML no evalkit runs with.
    clash = {"evalkit_fixture_clash/__init__.py": ""}
    build_wheel(wheels, "evalkit_fixture_clash", "1.0", clash, ["pyyaml<1"])
    make_readable(job.workspace)
    return job


@pytest.mark.parametrize("isolate", ["false", "true"])
def test_the_targets_packages_are_installed_before_the_gate(
    fake_github: FakeGitHub, folder: Path, isolate: str
) -> None:
    job = job_with(
        fake_github, folder, target_requirements="evals/requirements.txt", isolate_target=isolate
    )
    done = run(job)
    log = done.stdout + done.stderr
    assert done.returncode == 0, log
    assert "installed the python target's packages into" in log
    assert job.outputs()["verdict"] == "pass"


def test_without_the_input_the_target_cannot_import_its_package(
    fake_github: FakeGitHub, folder: Path
) -> None:
    done = run(job_with(fake_github, folder))
    assert done.returncode != 0
    assert "No module named 'evalkit_fixture_dep'" in done.stdout + done.stderr


def test_a_package_that_disagrees_with_evalkits_pins_is_one_line_exit_2(
    fake_github: FakeGitHub, folder: Path
) -> None:
    job = job_with(fake_github, folder, target_requirements="evals/clash.txt")
    done = run(job)
    log = done.stdout + done.stderr
    assert done.returncode == 2, log
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == 1, log
    assert "disagree with evalkit's own" in errors[0]
    assert "ResolutionImpossible" in errors[0]


@pytest.mark.parametrize(
    ("inputs", "needle"),
    [
        ({"target_requirements": "evals/nope.txt"}, "no such file in the workspace"),
        ({"target_requirements": "../outside.txt"}, "is outside the workspace"),
        ({"target_project": "evals"}, "is not a Python project"),
    ],
)
def test_a_bad_path_is_one_line_exit_2(
    fake_github: FakeGitHub, folder: Path, inputs: dict[str, str], needle: str
) -> None:
    done = run(job_with(fake_github, folder, **inputs))
    assert done.returncode == 2, done.stdout + done.stderr
    assert needle in done.stdout


def test_the_inputs_are_read() -> None:
    env = {"INPUT_TARGET-REQUIREMENTS": "req.txt", "INPUT_TARGET-PROJECT": "svc"}
    inputs = ActionInputs.from_env(env)
    assert (inputs.target_requirements, inputs.target_project) == ("req.txt", "svc")
    assert ActionInputs.from_env({}).target_requirements is None
