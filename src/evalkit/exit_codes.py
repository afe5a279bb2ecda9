"""The process exit codes of the CLI and the GitHub Action: one table, one owner.

A script (or CI) branches on these, so they never change meaning::

    0  OK            every blocking check passed (or the command did what it was asked)
    1  CHECK_FAILED  a blocking check failed: the change regressed
    2  INPUT         usage or input error (config, checks, goldens, artefact, flags)
    3  RUNTIME       runtime or infrastructure error (target down, cases failed, GitHub API)
    4  INCOMPLETE    the gate ran on a subset (``-k``/``--case``) and nothing blocked: no
                     verdict on the whole golden set, so not a pass (never from the Action)
  130  INTERRUPTED   stopped by Ctrl-C (128 + SIGINT, as shells report it)
  143  TERMINATED    stopped by SIGTERM (``docker stop``, a cancelled job), handled like Ctrl-C

Each :class:`evalkit.errors.EvalkitError` subclass carries its code as ``exit_code``,
so no caller maps exception classes to numbers by hand.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """What an ``evalkit`` process's exit status means."""

    OK = 0
    CHECK_FAILED = 1
    INPUT = 2
    RUNTIME = 3
    INCOMPLETE = 4
    INTERRUPTED = 130
    TERMINATED = 143
