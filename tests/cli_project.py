"""Small evalkit projects for CLI tests: a fixed-answer target module (runs via cli_process)."""

from __future__ import annotations

from collections.abc import Mapping

from cli_process import evalkit as run_evalkit

__all__ = ["answer_target", "run_evalkit"]


def answer_target(answers: Mapping[str, str]) -> str:
    """Source of a module whose ``make_target()`` answers each case id with fixed text."""
    return (
        "from evalkit import CallableTarget\n\n"
        f"ANSWERS = {dict(answers)!r}\n\n\n"
        "def make_target():\n"
        '    return CallableTarget(lambda case: ANSWERS[case.id], name="qa-bot")\n'
    )
