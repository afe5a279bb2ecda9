"""``--case-timeout`` is a hard deadline, tested without relying on timing luck.

* A case whose target never answers (it waits on an event nobody sets) is failed
  as timed out and the other cases are kept.
* A case that answers late while the coordinating thread is starved (the case
  holds the GIL past its deadline, so the coordinator cannot look) is still failed
  as timed out: its late answer is discarded and never scored, so no metric (and
  no judge) runs on it.

Both hold by construction (the blocking case never ends; the busy case runs for
twice its deadline by its own clock), whatever the machine's load.

A run with a case that never ends is a real subprocess: that the process still ends, its
abandoned thread with it, is part of the point (in process the thread would outlive the
test). The other runs call the CLI in process.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.artefact_docs import load_artefact
from helpers.cli import evalkit, evalkit_process
from helpers.tiny_project import CHECKS, GOLDENS, one_line_error

TARGET = """
import sys
import threading
import time

from evalkit import CallableTarget
from evalkit._model.registry import register_metric

NEVER = threading.Event()  # nobody sets it
TIMEOUT_S = 0.3


def make_target(block: str = "", hog: str = ""):
    def rank(case):
        if case.id in block.split(","):
            NEVER.wait()
        if case.id == hog:
            # Hold the GIL for twice the deadline: no other thread runs meanwhile.
            previous = sys.getswitchinterval()
            sys.setswitchinterval(60.0)
            try:
                end = time.monotonic() + 2 * TIMEOUT_S
                while time.monotonic() < end:
                    pass
            finally:
                sys.setswitchinterval(previous)
        return ["d1", "d2", "d3"]
    return CallableTarget(rank, name="slowpoke")


@register_metric("scored", higher_is_better=True)
def scored(response, case):
    with open("scored.log", "a") as fh:
        fh.write(case.id + "\\n")
    return 1.0
"""


def config(args: dict[str, str], concurrency: int) -> str:
    return json.dumps(
        {
            "goldens": "goldens.jsonl",
            "checks": "checks.yaml",
            "metrics": ["recall@1", "ndcg@10", "scored"],
            "plugins": ["slow_target"],
            "target": {"python": "slow_target:make_target", "args": args},
            "concurrency": concurrency,
            "case_timeout_s": 0.3,
        }
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "slow_target.py").write_text(TARGET)
    (tmp_path / "goldens.jsonl").write_text(GOLDENS)
    (tmp_path / "checks.yaml").write_text(CHECKS)
    return tmp_path


def rows(path: Path) -> dict[str, dict[str, object]]:
    return {row["id"]: row for row in load_artefact(path)["rows"]}


def test_a_case_that_never_answers_times_out_and_the_rest_are_kept(project: Path) -> None:
    (project / "evalkit.yaml").write_text(config({"block": "b"}, concurrency=2))
    result = evalkit_process("run", "--allow-failed", "--out", "run.json", cwd=project)
    assert result.returncode == 3, result.stderr
    assert "b: timed out after 0.3s" in result.stderr
    assert "Traceback" not in result.stderr
    got = rows(project / "run.json")
    assert got["b"]["error"] == "timed out after 0.3s"
    assert got["b"]["metrics"] == {}
    assert got["a"]["error"] is None
    assert got["c"]["error"] is None
    assert sorted((project / "scored.log").read_text().split()) == ["a", "c"]


def test_every_case_timing_out_is_one_line_naming_the_first(project: Path) -> None:
    (project / "evalkit.yaml").write_text(config({"block": "a,b,c"}, concurrency=3))
    result = evalkit_process("run", "--allow-failed", "--out", "run.json", cwd=project)
    one_line_error(result, 3, "all 3 case(s) failed", "a: timed out after 0.3s")
    assert not (project / "scored.log").exists()


def test_a_late_answer_is_discarded_even_when_the_coordinator_is_starved(project: Path) -> None:
    (project / "evalkit.yaml").write_text(config({"hog": "b"}, concurrency=1))
    result = evalkit("run", "--allow-failed", "--out", "run.json", cwd=project)
    assert result.returncode == 3, result.stderr
    got = rows(project / "run.json")
    assert got["b"]["error"] == "timed out after 0.3s"
    assert got["b"]["ids"] is got["b"]["text"] is None, "the late answer was kept"
    assert got["a"]["error"] is None
    assert got["c"]["error"] is None
    # The late answer was never scored: nothing is paid for an answer that is dropped.
    assert sorted((project / "scored.log").read_text().split()) == ["a", "c"]


def test_the_command_line_deadline_overrides_the_config(project: Path) -> None:
    (project / "evalkit.yaml").write_text(config({"block": "c"}, concurrency=1))
    result = evalkit_process(
        "run", "--allow-failed", "--out", "run.json", "--case-timeout", "0.2", cwd=project
    )
    assert result.returncode == 3, result.stderr
    assert rows(project / "run.json")["c"]["error"] == "timed out after 0.2s"


def test_an_absurdly_slow_rate_limit_is_refused_before_any_case(project: Path) -> None:
    (project / "evalkit.yaml").write_text(config({}, concurrency=1))
    result = evalkit("run", "--out", "run.json", "--rate-limit", "1e-300", cwd=project)
    one_line_error(result, 2, "rate limit 1e-300 per second is less than one case a day")
    assert not (project / "scored.log").exists()
    assert sorted(p.name for p in project.iterdir() if p.name.startswith("run.json")) == []


def test_an_astronomical_case_timeout_means_no_deadline_not_an_overflow(project: Path) -> None:
    (project / "evalkit.yaml").write_text(config({}, concurrency=2))
    result = evalkit("run", "--out", "run.json", "--case-timeout", "1e300", cwd=project)
    assert result.returncode == 0, result.stderr
    assert all(row["error"] is None for row in rows(project / "run.json").values())
