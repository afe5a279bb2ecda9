"""In-process CLI tests of a judged project: undo its imports, write its evalkit.yaml."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["imports_undone", "openai_judge_config"]


@contextmanager
def imports_undone(module: str) -> Iterator[None]:
    """For a test that calls ``evalkit.cli.main`` itself: the config's python_path and its
    target ``module`` (imported by name, so cached) do not outlive the test."""
    saved = list(sys.path)
    try:
        yield
    finally:
        sys.path[:] = saved
        sys.modules.pop(module, None)


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
