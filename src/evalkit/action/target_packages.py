"""A python target's own packages, installed before the gate (``target-requirements``,
``target-project``; docs/action.md, "A Python target's own packages").
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from evalkit.action.session import ActionRun
from evalkit.errors import ConfigError, InputError, RuntimeFailure
from evalkit.targets.isolated import child_environment, child_user, make_undumpable

# Lines of pip's error output a failure quotes (its last ones say why).
QUOTED_LINES = 3


def _pip_python() -> str:
    """An interpreter with pip for this Python: the venv's base (the image's /usr/local)."""
    for candidate in (Path(sys.base_prefix) / "bin" / "python3", Path(sys.executable)):
        if candidate.is_file():
            probe = subprocess.run(
                [str(candidate), "-m", "pip", "--version"], capture_output=True, check=False
            )
            if probe.returncode == 0:
                return str(candidate)
    raise RuntimeFailure(
        "target-requirements/target-project need pip, and neither this Python's base "
        f"interpreter ({sys.base_prefix}) nor {sys.executable} has it"
    )


def _inside(run: ActionRun, raw: str, what: str, want_dir: bool) -> Path:
    path = run.resolve(raw).resolve()
    workspace = run.workspace.resolve()
    if not path.is_relative_to(workspace):
        raise ConfigError(f"input {what} {raw!r} is outside the workspace {workspace}")
    if want_dir and not (path / "pyproject.toml").is_file() and not (path / "setup.py").is_file():
        raise ConfigError(
            f"input {what} {raw!r} is not a Python project (no pyproject.toml or setup.py in it)"
        )
    if not want_dir and not path.is_file():
        raise ConfigError(f"input {what} {raw!r}: no such file in the workspace")
    return path


def _constraints(folder: Path) -> Path:
    """evalkit's environment as pins: what the target's packages must agree with."""
    pins = sorted(
        {
            f"{dist.metadata['Name']}=={dist.version}"
            for dist in metadata.distributions()
            if dist.metadata["Name"]
        }
    )
    path = folder / "evalkit-constraints.txt"
    path.write_text("\n".join(pins) + "\n")
    return path


def install_target_packages(run: ActionRun) -> Path | None:
    """Install the target's packages named by the inputs; return their folder (None: none)."""
    inputs = run.inputs
    if inputs.target_requirements is None and inputs.target_project is None:
        return None
    what: list[str] = []
    if inputs.target_requirements is not None:
        req = _inside(run, inputs.target_requirements, "target-requirements", want_dir=False)
        what += ["--requirement", str(req)]
    if inputs.target_project is not None:
        what.append(str(_inside(run, inputs.target_project, "target-project", want_dir=True)))
    folder = Path(tempfile.mkdtemp(prefix="evalkit-target-packages-"))
    packages = folder / "site"
    packages.mkdir()
    folder.chmod(0o755)  # the target's children may run as another user (isolate-target)
    constraints = _constraints(folder)
    user = None
    if inputs.isolate_target:
        make_undumpable()  # as before the target's own children start
        user = child_user(run.workspace)
        if user is not None:
            os.chown(packages, *user)
    command = [
        _pip_python(),
        *("-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--quiet"),
        "--root-user-action=ignore",  # the action runs as root in its container
        *("--target", str(packages), "--constraint", str(constraints), *what),
    ]
    done = subprocess.run(
        command,
        cwd=run.workspace,
        env=child_environment(os.environ),
        capture_output=True,
        text=True,
        check=False,
        user=user[0] if user else None,
        group=user[1] if user else None,
    )
    if done.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        _raise_failure(inputs.target_requirements or inputs.target_project or "", done)
    site.addsitedir(str(packages))
    earlier = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(packages) + (os.pathsep + earlier if earlier else "")
    run.console.line(f"evalkit: installed the python target's packages into {packages}")
    return packages


def _raise_failure(named: str, done: subprocess.CompletedProcess[str]) -> None:
    lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    quoted = " | ".join(lines[-QUOTED_LINES:]) or f"pip exited {done.returncode}"
    if "ResolutionImpossible" in done.stderr or "conflict" in done.stderr.lower():
        raise InputError(
            f"the python target's packages ({named}) disagree with evalkit's own, which they "
            f"are installed beside: {quoted}; relax the pin, or serve the target over HTTP"
        )
    raise RuntimeFailure(f"could not install the python target's packages ({named}): {quoted}")
