"""Run the ``evalkit`` command in tests: in process (the default) or as a real subprocess.

:func:`evalkit` calls :func:`evalkit.cli.main` in this process, the way ``python -m evalkit``
would run it in ``cwd``: the same argv, environment, working directory and import path, stdout
and stderr captured, and everything the call changes in the process put back afterwards
(environment, working directory, ``sys.path``, the modules it imported from the project,
registrations, judges' cache-only mode, the SIGTERM handler, warning filters). It returns the same
:class:`subprocess.CompletedProcess` a subprocess would, in a fraction of the time.

:func:`evalkit_process` starts the real command, for tests where the process is the point:
signals, stdout closing, start-up, the exit status a shell sees.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import io
import os
import signal
import subprocess
import sys
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType

from evalkit._model import registry
from evalkit.cli import main
from evalkit.metrics import judge_guard
from helpers.child_evidence import run_bounded

__all__ = ["answer_target", "evalkit", "evalkit_process", "process_env", "write_files"]

# What the command sees on top of the caller's environment: no colour, wide lines.
_BASE_ENV = {"NO_COLOR": "1", "COLUMNS": "200"}


def process_env(env: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """The environment the command runs with: the caller's, no colour, wide lines, ``env``.

    A name ``env`` maps to ``None`` is unset.
    """
    full = {**os.environ, **_BASE_ENV}
    full.pop("EVALKIT_DEBUG", None)  # no inherited debug flag
    for name, value in (env or {}).items():
        if value is None:
            full.pop(name, None)
        else:
            full[name] = value
    return full


def evalkit(
    *args: str | Path, cwd: Path, env: Mapping[str, str | None] | None = None
) -> subprocess.CompletedProcess[str]:
    """``evalkit ARGS`` in ``cwd``, in this process: exit code, stdout and stderr."""
    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    with (
        _as_a_fresh_process(Path(cwd), process_env(env)),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        code = main(argv)
    return subprocess.CompletedProcess(
        ["evalkit", *argv], code, _as_read_from_a_pipe(out), _as_read_from_a_pipe(err)
    )


def _as_read_from_a_pipe(stream: io.StringIO) -> str:
    """The text as ``subprocess.run(text=True)`` reads it: universal newlines."""
    return stream.getvalue().replace("\r\n", "\n").replace("\r", "\n")


def evalkit_process(
    *args: str | Path, cwd: Path, env: Mapping[str, str | None] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m evalkit ARGS`` in ``cwd``, as a user's shell would run it (a hang fails
    with what its threads were doing: :mod:`helpers.child_evidence`)."""
    return run_bounded(
        [sys.executable, "-m", "evalkit", *map(str, args)], cwd=cwd, env=process_env(env)
    )


# Where the installation lives: the standard library, site-packages, evalkit's source, the
# tests' own folders. Taken at import, during collection, before any test can have put a
# project folder on sys.path. A module from anywhere else (a test's tmp_path, examples/) is
# a project's, imported afresh by each call as a new process would.
_INSTALLED = tuple(
    {Path(p).resolve() for p in [*sys.path, sys.prefix, sys.base_prefix] if p}
    | {Path(__file__).resolve().parents[1]}
)


@functools.cache
def _installed(path: str) -> bool:
    where = Path(path).resolve()
    return any(where.is_relative_to(root) for root in _INSTALLED)


def _project_modules() -> dict[str, ModuleType]:
    """The loaded modules a test's project put there (a target, a plugin), by name."""
    found = {}
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if file and not _installed(file):
            found[name] = module
    return found


@contextlib.contextmanager
def _as_a_fresh_process(cwd: Path, env: dict[str, str]) -> Iterator[None]:
    """Run the block as ``python -m`` would in ``cwd``, then undo what it changed.

    A fresh process has imported no project module yet: those another test (or an earlier
    call) left in ``sys.modules`` or on ``sys.path`` are set aside for the call, and the
    ones the call imports are dropped after it, so a project's ``tiny_target`` is always
    its own. evalkit's own modules stay loaded, as in a long-lived process.
    """
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_path = list(sys.path)
    saved_sigterm = signal.getsignal(signal.SIGTERM)
    saved_bytecode = sys.dont_write_bytecode
    saved_cache_only = judge_guard.cache_only()  # --judge-cache-only is process-wide
    set_aside = _project_modules()
    for name in set_aside:
        del sys.modules[name]
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    # what `python -m` puts first, then the installation's own folders
    sys.path[:] = [str(cwd.resolve()), *(p for p in saved_path if not p or _installed(p))]
    # A project module rewritten within the same second must not be read from a stale .pyc.
    sys.dont_write_bytecode = True
    importlib.invalidate_caches()
    try:
        with registry.isolated(), warnings.catch_warnings():
            yield
    finally:
        for name in _project_modules():
            del sys.modules[name]
        sys.modules.update(set_aside)
        sys.path[:] = saved_path
        sys.dont_write_bytecode = saved_bytecode
        judge_guard.set_cache_only(saved_cache_only)
        signal.signal(signal.SIGTERM, saved_sigterm)
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


def write_files(root: Path, files: dict[str, str]) -> Path:
    """Write a project's files (name -> text) into ``root`` and return ``root``."""
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def answer_target(answers: Mapping[str, str]) -> str:
    """Source of a module whose ``make_target()`` answers each case id with fixed text."""
    return (
        "from evalkit import CallableTarget\n\n"
        f"ANSWERS = {dict(answers)!r}\n\n\n"
        "def make_target():\n"
        '    return CallableTarget(lambda case: ANSWERS[case.id], name="qa-bot")\n'
    )
