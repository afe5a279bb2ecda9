"""The GitHub Action's entry point: inputs -> the mode -> outputs, summary and exit code.

The gate is injected (a :data:`~evalkit.action.contract.GateRunner`); exit codes are the
gate's (:data:`evalkit.exit_codes.ACTION_CODES`; docs/design/code-notes.md).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from evalkit.action.comment_mode import post_from_dir
from evalkit.action.contract import GateOutcome, GateRequest, GateRunner
from evalkit.action.gate_mode import GATE
from evalkit.action.inputs import ActionInputs, Mode, mask_secrets, retry_from_env
from evalkit.action.pin_mode import PIN
from evalkit.action.promote_mode import PROMOTE
from evalkit.action.session import ActionRun, export_host_gateway
from evalkit.action.skeleton import ModeFlow, error_state, run_mode
from evalkit.errors import EvalkitError
from evalkit.exit_codes import ExitCode
from evalkit.github.client import GithubFactory, RetryPolicy, default_github_factory
from evalkit.github.context import GitHubContext
from evalkit.github.outputs import Console, append_summary, env_path, write_outputs

if TYPE_CHECKING:
    import httpx

# The modes that read evalkit.yaml and open its store (comment mode does neither).
FLOWS: Mapping[Mode, ModeFlow] = {flow.name: flow for flow in (GATE, PROMOTE, PIN)}


def _start(
    env: Mapping[str, str],
    github_factory: GithubFactory | None,
    http_client: httpx.Client | None,
    stdout: TextIO | None,
    retry: RetryPolicy | None,
) -> ActionRun | None:
    """The run's state, or None when the inputs or the environment are unusable (said so)."""
    console = Console(stdout if stdout is not None else sys.stdout)
    try:
        inputs = ActionInputs.from_env(env)
    except EvalkitError as exc:
        console.error(str(exc), title="evalkit: bad input")
        return None
    mask_secrets(env, inputs, console)
    try:
        ctx = GitHubContext.from_env(env)
        policy = retry if retry is not None else retry_from_env(env)
    except EvalkitError as exc:
        console.error(str(exc), title="evalkit: bad environment")
        return None
    return ActionRun(
        env=env,
        inputs=inputs,
        ctx=ctx,
        console=console,
        github_factory=github_factory or default_github_factory,
        http_client=http_client,
        retry=policy,
    )


def _bad_input(env: Mapping[str, str]) -> int:
    # Bad inputs: still leave verdict, exit-code and a summary line behind, so later
    # steps (and the job page) show "error", not empty outputs.
    output = env_path(env, "GITHUB_OUTPUT")
    if output is not None:
        code = str(int(ExitCode.INPUT))
        write_outputs(output, {"verdict": "error", "blocking-failures": "0", "exit-code": code})
    summary = env_path(env, "GITHUB_STEP_SUMMARY")
    if summary is not None:
        append_summary(
            summary,
            f"### evalkit: error (exit {int(ExitCode.INPUT)})\n\nbad action input (see the log)\n",
        )
    return ExitCode.INPUT


def _mode(run: ActionRun, gate: GateRunner) -> int:
    if run.inputs.mode == "comment":
        return post_from_dir(run, run.resolve(run.inputs.report_dir))
    export_host_gateway(run.env)
    return run_mode(run, gate, FLOWS[run.inputs.mode])


def run_action(
    env: Mapping[str, str],
    gate: GateRunner,
    *,
    github_factory: GithubFactory | None = None,
    http_client: httpx.Client | None = None,
    stdout: TextIO | None = None,
    retry: RetryPolicy | None = None,
) -> int:
    """Run the action as the container entrypoint does; return the process exit code."""
    run = _start(env, github_factory, http_client, stdout, retry)
    if run is None:
        return _bad_input(env)
    mode = run.inputs.mode
    try:
        return run.finish(_mode(run, gate))
    except EvalkitError as exc:
        code = error_state(run, str(exc), exc.exit_code, title=f"evalkit {mode} failed")
    except Exception as exc:
        # A bug (ours or a plugin's) must still leave outputs and a readable error behind,
        # so the workflow's later steps and the reviewer see "error", not silence.
        message = " ".join(f"{type(exc).__name__}: {exc}".split())
        code = error_state(
            run, f"internal error: {message}", ExitCode.RUNTIME, title=f"evalkit {mode} failed"
        )
    return run.finish(code)


def post_comment_from_dir(
    report_dir: Path,
    env: Mapping[str, str],
    *,
    github_factory: GithubFactory | None = None,
    stdout: TextIO | None = None,
    retry: RetryPolicy | None = None,
) -> int:
    """``evalkit comment --from DIR``: the fork companion, on a ``workflow_run`` event.

    The token comes from ``INPUT_GITHUB-TOKEN`` or ``GITHUB_TOKEN``. A relative
    ``report_dir`` is a command-line path, so it is relative to the working directory
    (a ``run:`` step may set ``working-directory``), not to ``GITHUB_WORKSPACE``.
    """
    merged = dict(env)
    merged["INPUT_MODE"] = "comment"
    merged["INPUT_REPORT-DIR"] = str(Path(report_dir).absolute())
    return run_action(
        merged,
        _no_gate,
        github_factory=github_factory,
        stdout=stdout,
        retry=retry,
    )


def _no_gate(_request: GateRequest) -> GateOutcome:
    raise AssertionError("comment mode never runs the gate")
