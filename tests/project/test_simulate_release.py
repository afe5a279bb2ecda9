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

import pytest
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
                f"steps.{step['id']}.outputs.{k}"
                for k in ("digest", "image", "version", "major", "move", "lease")
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


# ------------------------------------------------ the downgrade scenario (#48), judged


def test_the_downgrade_scenario_plays_both_paths_in_order() -> None:
    (newest, newest_tag), (older, older_tag), (rerun, rerun_tag) = sim.DOWNGRADE_JOBS
    assert newest_tag == sim.TAG
    assert older_tag == rerun_tag == sim.OLDER_TAG
    version = [tuple(int(p) for p in t.removeprefix("v").split(".")) for t in (sim.TAG, older_tag)]
    assert version[1] < version[0]  # older...
    assert version[1][0] == version[0][0]  # ...on the same major version
    assert len({newest, older, rerun}) == 3  # each job its own runner files


REFUSED = "Refuse a version the action repository already has"
NEWEST_REFS = {"refs/tags/v0": "n", "refs/heads/main": "n", f"refs/tags/{sim.TAG}": "n"}
OLDER = sim.OLDER_TAG.removeprefix("v")
NEWEST_IMAGES = {"v0": "sha256:new", sim.TAG.removeprefix("v"): "sha256:new"}


def jobs(
    older_refs: dict[str, str] | None = None,
    older_images: dict[str, str] | None = None,
    summary: str = "### v0 not moved\n\nv0.2.9 is older than v0.3.0 ...",
    rerun_step: str = "FAILED (exit 1)",
) -> list[Any]:
    ok = [("Build and push the two-architecture image", "ok")]
    older_refs = older_refs or {**NEWEST_REFS, f"refs/tags/{sim.OLDER_TAG}": "o"}
    older_images = older_images or {**NEWEST_IMAGES, OLDER: "sha256:old"}
    return [
        sim.JobRun("newest", sim.TAG, ok, "", sim.Published(NEWEST_REFS, NEWEST_IMAGES)),
        sim.JobRun("older", sim.OLDER_TAG, ok, summary, sim.Published(older_refs, older_images)),
        sim.JobRun(
            "rerun-older",
            sim.OLDER_TAG,
            [(REFUSED, rerun_step)],
            "",
            sim.Published(older_refs, older_images),
        ),
    ]


def test_the_downgrade_verdict_holds_when_nothing_moves_back() -> None:
    ok, line = sim.downgrade_verdict(jobs())
    assert ok, line


@pytest.mark.parametrize(
    ("broken", "needle"),
    [
        ({"older_refs": {**NEWEST_REFS, "refs/tags/v0": "o"}}, "moved refs/tags/v0"),
        ({"older_refs": {**NEWEST_REFS, "refs/heads/main": "o"}}, "moved refs/heads/main"),
        ({"older_images": {**NEWEST_IMAGES, "v0": "sha256:old", OLDER: "sha256:old"}}, "moved :v0"),
        ({"summary": ""}, "job summary"),
        ({"rerun_step": "ok"}, "was not refused"),
        ({"older_images": {OLDER: "sha256:old"}}, "moved :v0"),  # a :v0 nobody could read
        ({"older_refs": dict(NEWEST_REFS)}, "was not published"),
    ],
)
def test_the_downgrade_verdict_fails_on_each_way_back(broken: dict[str, Any], needle: str) -> None:
    ok, line = sim.downgrade_verdict(jobs(**broken))
    assert not ok
    assert needle in line, line
