"""``isolate-target``: the python target runs in a child that cannot read the job's token (#25).

Real processes throughout: a parent process (standing in for the action, with
``INPUT_GITHUB-TOKEN``, ``GITHUB_TOKEN`` and ``ACTIONS_RUNTIME_TOKEN`` in its environment)
builds the isolated target from an evalkit.yaml and asks it one case; the target is a
probe that reports what it can see: its ``os.environ``, its ``/proc/self/environ`` and
its parent's ``/proc/PID/environ``. The controls show the probe does find the token when
the protection in question is off, so the assertions can fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.child_evidence import run_bounded
from helpers.isolation import make_readable, parent_python, readable_folder

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux (prctl)")

SECRETS = {
    "INPUT_GITHUB-TOKEN": "ghs_input_token_0123456789",
    "GITHUB_TOKEN": "ghs_env_token_0123456789",
    "ACTIONS_RUNTIME_TOKEN": "runtime_token_0123456789",
}
KEPT = {"MY_SEARCH_API_KEY": "the-target-needs-this", "INPUT_CONFIG": "evalkit.yaml"}

PROBE = """
import json, os


def make():
    def probe(case):
        print("this line goes to stderr, not into the protocol")
        found = {"env": sorted(os.environ), "pid": os.getpid(), "ppid": os.getppid()}
        with open("/proc/self/environ", "rb") as f:
            found["self_environ"] = f.read().decode("utf-8", "replace")
        try:
            with open(f"/proc/{os.getppid()}/environ", "rb") as f:
                found["parent_environ"] = f.read().decode("utf-8", "replace")
        except OSError as exc:
            found["parent_environ_error"] = type(exc).__name__
        return json.dumps(found)

    return probe
"""

CONFIG = """\
name: probe
goldens: goldens.jsonl
checks: checks.yaml
metrics: [recall@1]
python_path: ["."]
target:
  python: "probe:make"
"""

# The parent: what action_gate does with isolate-target, and one case. The controls
# switch off one protection each: ``dumpable`` leaves the parent readable
# (make_undumpable patched out), ``same-user`` keeps a root parent's child root.
PARENT = """
import json, sys
import evalkit.targets.isolated as isolated
if sys.argv[2] == "dumpable":
    isolated.make_undumpable = lambda: None
if sys.argv[2] == "same-user":
    isolated.child_user = lambda workdir: None
from evalkit._spec.config import load_config
from evalkit._model.golden_cases import GoldenCase
from evalkit._app.isolated_target import isolated_target
target = isolated_target(load_config(sys.argv[1]))
try:
    response = target.invoke(GoldenCase(id="q1", query="anything"))
    print(json.dumps({"name": target.name, "text": response.text}))
finally:
    target.close()
"""


def write_project(root: Path, *, plugins: bool = False) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "probe.py").write_text(PROBE)
    (root / "goldens.jsonl").write_text('{"id": "q1", "query": "anything", "relevant": ["a"]}\n')
    (root / "checks.yaml").write_text("checks: []\n")
    config = CONFIG + ("plugins: [probe]\n" if plugins else "")
    (root / "evalkit.yaml").write_text(config)
    return root / "evalkit.yaml"


@pytest.fixture(name="project")
def project_fixture() -> Iterator[Path]:
    with readable_folder() as folder:
        config = write_project(folder / "p")
        make_readable(folder)
        yield config


def run_parent(config: Path, mode: str = "isolated") -> subprocess.CompletedProcess[str]:
    python, extra = parent_python()
    env = {**os.environ, **SECRETS, **KEPT, **extra}
    return run_bounded([python, "-c", PARENT, str(config), mode], env=env, cwd=config.parent)


def probe_result(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stdout + done.stderr
    outer = json.loads(done.stdout.strip().splitlines()[-1])
    assert outer["name"] == "probe"
    result: dict[str, Any] = json.loads(outer["text"])
    return result


def test_the_child_holds_no_token_and_cannot_read_the_parents(project: Path) -> None:
    done = run_parent(project)
    seen = probe_result(done)
    for name, value in SECRETS.items():
        assert name not in seen["env"]
        assert value not in seen["self_environ"]
    assert "parent_environ" not in seen, "the child read the parent's environment"
    assert seen["parent_environ_error"] == "PermissionError"
    # The target's own secret stays; the action's inputs go, all of them.
    assert "MY_SEARCH_API_KEY" in seen["env"]
    assert "INPUT_CONFIG" not in seen["env"]
    # What the target printed reached the log, and the answer still came through.
    assert "this line goes to stderr" in done.stderr


def test_without_the_protection_the_probe_finds_the_token(project: Path) -> None:
    """Control: the one protection that holds for this user, switched off, lets the same
    probe read the token in its parent's environment (so the test above can fail)."""
    mode = "same-user" if os.geteuid() == 0 else "dumpable"
    seen = probe_result(run_parent(project, mode))
    assert any(value in seen.get("parent_environ", "") for value in SECRETS.values()), seen


def test_in_process_the_probe_reads_the_token(project: Path) -> None:
    """Control: run the old way, in the process that holds the token, it sees it all."""
    script = "import sys; sys.path.insert(0, '.'); import probe; print(probe.make()(None))"
    done = subprocess.run(
        [sys.executable, "-c", script], env={**os.environ, **SECRETS}, capture_output=True,
        text=True, cwd=project.parent, check=True, timeout=60,
    )  # fmt: skip
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    for name, value in SECRETS.items():
        assert name in seen["env"]
        assert value in seen["self_environ"]


def test_plugins_are_refused_with_isolation(project: Path) -> None:
    write_project(project.parent, plugins=True)
    make_readable(project.parent)
    done = run_parent(project)
    assert done.returncode != 0
    assert "plugins are imported into the action's own process" in done.stderr


def test_a_target_that_cannot_be_built_fails_at_start(project: Path) -> None:
    project.write_text(CONFIG.replace("probe:make", "probe:missing"))
    done = run_parent(project)
    assert done.returncode != 0
    assert "target.python: 'probe' has no 'missing'" in done.stderr
