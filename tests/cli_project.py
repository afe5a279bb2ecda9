"""Small evalkit projects for CLI tests: a fixed-answer target module (runs via cli_process)."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from cli_process import evalkit as run_evalkit

__all__ = ["answer_target", "imports_undone", "run_evalkit"]


@contextmanager
def imports_undone(module: str) -> Iterator[None]:
    """For an in-process CLI test: the config's python_path and its target ``module``
    (imported by name, so cached) do not outlive the test."""
    saved = list(sys.path)
    try:
        yield
    finally:
        sys.path[:] = saved
        sys.modules.pop(module, None)


def answer_target(answers: Mapping[str, str]) -> str:
    """Source of a module whose ``make_target()`` answers each case id with fixed text."""
    return (
        "from evalkit import CallableTarget\n\n"
        f"ANSWERS = {dict(answers)!r}\n\n\n"
        "def make_target():\n"
        '    return CallableTarget(lambda case: ANSWERS[case.id], name="qa-bot")\n'
    )
