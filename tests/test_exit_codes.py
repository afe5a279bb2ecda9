"""One table of exit codes: every evalkit error carries its own, and the gate uses the same."""

from __future__ import annotations

import inspect

import pytest

from evalkit import ExitCode, errors
from evalkit.errors import EvalkitError, InputError, RuntimeFailure

ERROR_CLASSES = [
    cls
    for _, cls in inspect.getmembers(errors, inspect.isclass)
    if issubclass(cls, EvalkitError) and cls.__module__ == errors.__name__
]


def test_the_codes_scripts_branch_on_never_change() -> None:
    assert [(c.name, int(c)) for c in ExitCode] == [
        ("OK", 0),
        ("CHECK_FAILED", 1),
        ("INPUT", 2),
        ("RUNTIME", 3),
        ("INCOMPLETE", 4),
        ("INTERRUPTED", 130),
        ("TERMINATED", 143),
    ]


@pytest.mark.parametrize("cls", ERROR_CLASSES, ids=lambda c: c.__name__)
def test_every_error_class_carries_the_code_of_its_kind(cls: type[EvalkitError]) -> None:
    kinds = [base for base in cls.__mro__ if base in (InputError, RuntimeFailure)]
    if not kinds:  # the root
        assert cls is EvalkitError
        assert cls.exit_code is ExitCode.RUNTIME
        return
    # A class that is both (e.g. a judge's bad config) takes the kind it names first.
    expected = ExitCode.INPUT if kinds[0] is InputError else ExitCode.RUNTIME
    assert cls.exit_code is expected


def test_the_github_errors_are_runtime_failures() -> None:
    from evalkit.github.errors import GitHubApiError

    assert GitHubApiError.exit_code is ExitCode.RUNTIME
