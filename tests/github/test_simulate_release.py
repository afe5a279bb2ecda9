"""The release simulation keeps up with the workflow it simulates (#25).

scripts/simulate_release.py runs release.yml's steps (root, ~25 minutes: run by hand,
docs/action.md "Simulating a release"); these checks are what can drift silently: an
expression the simulation cannot fill, or a buildx option its shim does not take.
"""

from __future__ import annotations

import re
import shlex
from types import ModuleType
from typing import Any

import yaml

from helpers.scripts import load_script

sim: ModuleType = load_script("scripts/simulate_release.py")
shim: ModuleType = load_script("scripts/release_sim_buildx.py")


def job() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(sim.WORKFLOW.read_text())["jobs"]["release"]
    return loaded


def test_every_expression_of_the_job_is_one_the_simulation_fills() -> None:
    known = set(sim.event_context("sha", "token", "action-token"))
    for step in job()["steps"]:
        if "uses" in step:
            continue  # done by the simulation itself (checkout, setup-python)
        values = [*job()["env"].values(), *(step.get("env") or {}).values()]
        for value in values:
            for name in re.findall(r"\$\{\{\s*([\w.-]+)\s*\}\}", str(value)):
                assert name in known, (step["name"], name)
        if "id" in step:
            known |= {
                f"steps.{step['id']}.outputs.{k}" for k in ("digest", "image", "version", "major")
            }
        assert "${{" not in str(step["run"]), f"{step['name']}: an expression inside run:"


def test_the_shim_takes_the_push_steps_buildx_command_and_nothing_more() -> None:
    (push,) = [s for s in job()["steps"] if s.get("id") == "push"]
    script = str(push["run"]).replace("\\\n", " ")
    (line,) = [ln for ln in script.splitlines() if "docker buildx build" in ln]
    argv = shlex.split(line.strip())[3:]  # after `docker buildx build`
    opts = shim.build_parser().parse_args(argv)
    assert opts.platform == "$PLATFORMS"
    assert opts.push
    assert opts.context == "."
