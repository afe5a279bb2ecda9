"""A run whose own client was the bottleneck says so in the gate's report, not only on stderr.

``evalkit gate`` in process on the tiny project, with evaluate()'s clocks injected so the
run measures as saturated (the rule itself is tested in test_client_load.py).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from evalkit._engine import execute
from evalkit._engine.client_load import ThreadWait
from helpers.cli import evalkit, write_files
from helpers.tiny_project import CHECKS, CONFIG

MANY = "".join(f'{{"id": "q{i}", "query": "q{i}", "relevant": ["d1"]}}\n' for i in range(40))
TARGET = """
from evalkit import CallableTarget


def make_target():
    return CallableTarget(lambda case: ["d1", "d2"], name="plain")
"""


class NoWait(ThreadWait):
    def _read(self) -> float:
        return 0.0


@pytest.fixture
def saturated_clocks(monkeypatch: pytest.MonkeyPatch) -> None:
    # each run: 2 s of wall time, 1.9 s of this process's CPU -> 95 % busy
    wall = itertools.cycle([0.0, 2.0])
    cpu = itertools.cycle([0.0, 1.9])
    monkeypatch.setattr(execute, "_wall_clock", lambda: next(wall))
    monkeypatch.setattr(execute, "_cpu_clock", lambda: next(cpu))
    monkeypatch.setattr(execute, "_thread_wait", NoWait)  # the machine's real load left out


def _project(tmp_path: Path) -> Path:
    config = CONFIG.replace("tiny_target:make_target", "busy_target:make_target")
    checks = CHECKS.split("  - id: no_regression")[0]
    return write_files(
        tmp_path,
        {
            "busy_target.py": TARGET,
            "goldens.jsonl": MANY,
            "checks.yaml": checks,
            "evalkit.yaml": config,
        },
    )


def test_a_saturated_run_is_noted_in_every_report(tmp_path: Path, saturated_clocks: None) -> None:
    root = _project(tmp_path)
    result = evalkit(
        "gate", "--concurrency", "8", "--json", "gate.json", "--markdown", "gate.md", cwd=root
    )
    assert result.returncode == 0, result.stderr
    # said once on stderr, as before
    assert result.stderr.count("the client's own CPU limited this run at concurrency 8") == 1
    notes = json.loads((root / "gate.json").read_text())["notes"]
    (note,) = [n for n in notes if n.startswith("client saturation: ")]
    assert "concurrency 8" in note
    assert "client saturation" in (root / "gate.md").read_text()
    assert "client saturation" in result.stdout


def test_a_run_with_cpu_to_spare_adds_no_note(tmp_path: Path) -> None:
    root = _project(tmp_path)
    result = evalkit("gate", "--json", "gate.json", cwd=root)
    assert result.returncode == 0, result.stderr
    notes = json.loads((root / "gate.json").read_text())["notes"]
    assert not [n for n in notes if "saturation" in n]
