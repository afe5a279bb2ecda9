"""One invocation of ``evalkit``: argv in, one exit code out, errors as one stderr line.

Exit codes are :class:`evalkit.exit_codes.ExitCode` (the one table, with what each
means: :data:`evalkit.exit_codes.MEANINGS`).  Errors are one line on stderr; ``--debug`` (or
``EVALKIT_DEBUG=1``) adds the traceback, never a different exit code.  A reader
that closes stdout early (``| head -1``) does not change the exit code.  SIGINT and SIGTERM
stop a command promptly on any thread (docs/design/signals.md).
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import Any

import typer

from evalkit.cli.common import (
    Session,
    discard_stdout,
    err,
    interrupt_reported,
    nothing_to_tear_down,
    report_interrupt,
)
from evalkit.cli.root import app
from evalkit.exit_codes import ExitCode


def main(argv: list[str] | None = None) -> int:
    """The CLI in-process: maps evalkit errors to one stderr line and returns the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    session = Session(debug=os.environ.get("EVALKIT_DEBUG", "") not in ("", "0"))
    from evalkit._util.signals import guard

    with guard():
        return _dispatch(args, session)


def process_main() -> None:
    """The ``evalkit`` command: :func:`main`, then the process ends with its exit code.

    After an interruption, or a scored TREC file once written, the process ends as soon
    as stdout and stderr are flushed (:func:`evalkit._util.signals.exit_now`): nothing
    is left to tear down, and a cancelled job has only seconds before SIGKILL.
    """
    code = main()
    done = code == ExitCode.OK and nothing_to_tear_down.is_set()
    if done or code in (ExitCode.INTERRUPTED, ExitCode.TERMINATED):
        from evalkit._util.signals import exit_now

        exit_now(code)
    sys.exit(code)


def _dispatch(args: list[str], session: Session) -> int:
    from evalkit._util.signals import terminated

    _show_run_warnings()
    interrupt_reported.clear()
    nothing_to_tear_down.clear()
    try:
        code = app(args=args, prog_name="evalkit", standalone_mode=False, obj=session)
    except typer.Exit as exc:
        if exc.exit_code == ExitCode.INTERRUPTED and terminated():
            return ExitCode.TERMINATED
        return int(exc.exit_code)
    except KeyboardInterrupt as exc:
        return report_interrupt(exc)
    except BrokenPipeError:
        # The reader (`| head -1`) stopped listening: not a failure of evalkit's.
        discard_stdout()
        return ExitCode.OK
    except Exception as exc:
        if session.debug:
            traceback.print_exc()
        return _report_error(exc)
    # Typer answers a KeyboardInterrupt inside a command with a silent 130: say it here,
    # unless the command already did (a run says what its checkpoint kept).
    if code == ExitCode.INTERRUPTED and not interrupt_reported.is_set():
        return report_interrupt(KeyboardInterrupt())
    if code == ExitCode.INTERRUPTED and terminated():
        return ExitCode.TERMINATED
    return int(code) if isinstance(code, int) else ExitCode.OK


def _show_run_warnings() -> None:
    """A run's own warnings (client saturation, a judge's changed request field) as
    ``evalkit: warning: ...`` on stderr."""
    import warnings

    from evalkit.errors import EvalkitWarning

    default = warnings.showwarning

    def show(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        if issubclass(category, EvalkitWarning):
            err(f"warning: {message}")
        else:
            default(message, category, *args, **kwargs)

    warnings.showwarning = show


def _usage_problem(exc: BaseException) -> str | None:
    """The one-line message of a click usage error, or None for anything else.

    Typer vendors its own copy of click, so match by shape rather than class.
    """
    if type(exc).__name__ == "Abort":
        return "interrupted"
    format_message = getattr(exc, "format_message", None)
    if not callable(format_message) or not hasattr(exc, "exit_code"):
        return None
    # click's "no arguments, so here is the help" error carries the whole help as its
    # message (plain help) or none (rich help): either way, one line says what is wrong.
    if type(exc).__name__ == "NoArgsIsHelpError":
        message = "no command given"
    else:
        message = " ".join(str(format_message()).split()) or "no command given"
    ctx = getattr(exc, "ctx", None)
    command_path = getattr(ctx, "command_path", None)
    if command_path:
        message += f" (see '{command_path} --help')"
    return message


def _report_error(exc: Exception) -> ExitCode:
    """One stderr line for ``exc``, and the exit code it ends the process with."""
    from evalkit._util.signals import terminated
    from evalkit.errors import EvalkitError

    usage = _usage_problem(exc)
    if usage == "interrupted" and terminated():
        err("terminated")
        return ExitCode.TERMINATED
    if usage is not None:
        err(usage)
        return ExitCode.INTERRUPTED if usage == "interrupted" else ExitCode.INPUT
    message = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, EvalkitError):
        err(message)
        return exc.exit_code
    err(f"internal error: {type(exc).__name__}: {message} (rerun with --debug for details)")
    return ExitCode.RUNTIME


if __name__ == "__main__":  # pragma: no cover
    process_main()
