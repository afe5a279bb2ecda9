"""The Action exits with the code each error carries, as the CLI does: one table (ExitCode)."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from actions_job import make_job, pr_payload
from fake_github import FakeGitHub, fake_github_fixture  # noqa: F401  (registers the fixture)
from test_github_action import StubGate, seed_baseline

from evalkit import errors
from evalkit.errors import EvalkitError
from evalkit.github import client as github_errors

ERROR_CLASSES = sorted(
    {
        cls
        for module in (errors, github_errors)
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, EvalkitError)
    },
    key=lambda cls: cls.__name__,
)


def test_the_error_classes_include_ones_both_input_and_runtime() -> None:
    """The classes where a hand-written isinstance mapping and exit_code disagreed."""
    both = [
        cls
        for cls in ERROR_CLASSES
        if issubclass(cls, errors.InputError) and issubclass(cls, errors.RuntimeFailure)
    ]
    assert both  # e.g. JudgeConfigError: a bad config (exit 2), not a runtime failure


@pytest.mark.parametrize("cls", ERROR_CLASSES, ids=lambda cls: cls.__name__)
def test_an_error_in_the_gate_exits_the_action_with_its_own_code(
    fake_github: FakeGitHub, tmp_path: Path, cls: type[EvalkitError]
) -> None:
    seed_baseline(fake_github)
    job = make_job(fake_github, tmp_path, "pull_request", pr_payload(fake_github))
    code = job.run(StubGate(raises=cls("the gate could not decide")))
    assert code == cls.exit_code
    assert job.outputs()["exit-code"] == str(int(cls.exit_code))
    assert job.outputs()["verdict"] == "error"
