"""Small evalkit projects for CLI tests: a fixed-answer target module (runs via cli_process)."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from cli_process import evalkit as run_evalkit

__all__ = ["answer_target", "imports_undone", "openai_judge_config", "run_evalkit"]


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


def openai_judge_config(
    module: str, base_url: str, *, model: str, metrics: str, goldens: str, extra: str = ""
) -> str:
    """evalkit.yaml for ``module``'s fixed-answer target graded as ``helpfulness`` by an
    OpenAI-compatible judge at ``base_url`` (``extra``: more judge settings)."""
    return (
        f"goldens: {goldens}\nchecks: checks.yaml\nmetrics: [{metrics}]\n"
        f'target:\n  python: "{module}:make_target"\n'
        "judge:\n  metric: helpfulness\n  provider: openai\n"
        f"  base_url: {base_url}\n  model: {model}\n"
        '  rubric: "5 if the answer is right, 1 if it is wrong."\n'
        f"  cache_path: cache/judge.json\n{extra}"
    )
