"""The process exit codes of the CLI and the GitHub Action: one table, one owner."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import IntEnum
from typing import Final


class ExitCode(IntEnum):
    """What an ``evalkit`` process's exit status means (:data:`MEANINGS`)."""

    OK = 0
    CHECK_FAILED = 1
    INPUT = 2
    RUNTIME = 3
    INCOMPLETE = 4
    INTERRUPTED = 130
    TERMINATED = 143


MEANINGS: Final[Mapping[ExitCode, str]] = {
    ExitCode.OK: "every blocking check passed (or the command did what it was asked)",
    ExitCode.CHECK_FAILED: "a blocking check failed: the change regressed",
    ExitCode.INPUT: "bad input: config, checks, goldens, artefact or flags",
    ExitCode.RUNTIME: (
        "a runtime or infrastructure failure: target unreachable, failed cases, GitHub API"
    ),
    ExitCode.INCOMPLETE: (
        "the gate ran on a subset (`-k`/`--case`), or `stop_early:` spent a budget before "
        "every check settled, and nothing blocked: no verdict on the whole golden set, so "
        "not a pass"
    ),
    ExitCode.INTERRUPTED: "stopped by Ctrl-C (SIGINT; 128 + 2, as shells report it)",
    ExitCode.TERMINATED: "stopped by SIGTERM (`docker stop`, a cancelled job), like Ctrl-C",
}

#: The codes the GitHub Action ends with: every one, since a pull request's gate with
#: ``stop_early:`` is incomplete (4) when a budget runs out first, as ``evalkit gate`` is
#: (the Action never gates a ``-k``/``--case`` subset).
ACTION_CODES: Final = tuple(ExitCode)


def markdown_table(codes: Iterable[ExitCode] = tuple(ExitCode)) -> str:
    """The table as Markdown, one row per code: what the docs show."""
    rows = [f"| `{int(code)}` | `{code.name}` | {MEANINGS[code]} |" for code in codes]
    return "\n".join(["| exit | `ExitCode` | meaning |", "|---|---|---|", *rows]) + "\n"
