"""A gate that stops early, killed and resumed, ends where the uninterrupted one does; a
shard with ``stop_early`` is refused naming the key.  ``evalkit`` in process."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit import read_artifact
from evalkit._engine.checkpoint import checkpoint_path, read_checkpoint
from evalkit._model import registry
from evalkit.cli import main
from helpers.judge_project import imports_undone

N = 1000
MODULE = "resumed_target"
TARGET = """
import hashlib
import os
import random

from evalkit import CallableTarget, register_metric

CALLS = []


@register_metric("quality", higher_is_better=True, bounds=(0, 1))
def quality(response, case):
    return min(max(float(response.ranked_ids[0]), 0.0), 1.0)


def make(mode="same"):
    kill_at = int(os.environ.get("KILL_AT", "0"))

    def answer(case):
        CALLS.append(case.id)
        if len(CALLS) == kill_at:
            raise KeyboardInterrupt  # the gate is stopped here (Ctrl-C, a cancelled job)
        q = int(hashlib.sha256(case.id.encode()).hexdigest()[:8], 16) / 16**8
        if mode == "regressed":
            q -= 0.08 + random.Random(case.id).gauss(0.0, 0.2)
        return [repr(q)]

    return CallableTarget(answer, name=mode)
"""
CONFIG = """\
name: quality
goldens: goldens.jsonl
checks: checks.yaml
metrics: [quality]
plugins: [{module}]
target:
  python: "{module}:make"
  args: {{mode: {mode}}}
n_resamples: 200
stop_early:
  batch: 50
  seed: 11
"""
CHECKS = (
    "checks:\n  - id: not_worse\n    metric: quality\n    vs_baseline: no_significant_regression\n"
)


@pytest.fixture(params=[1, 2], ids=["once", "repeats-2"])
def project(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    """The project; with ``repeats: 2`` the checkpoint keeps trials, not cases."""
    (tmp_path / f"{MODULE}.py").write_text(TARGET)
    (tmp_path / "goldens.jsonl").write_text(
        "".join(f'{{"id": "c{i:04d}", "query": "q{i}"}}\n' for i in range(N))
    )
    (tmp_path / "checks.yaml").write_text(CHECKS)
    for mode in ("same", "regressed"):
        config = CONFIG.format(module=MODULE, mode=mode) + f"repeats: {request.param}\n"
        (tmp_path / f"{mode}.yaml").write_text(config)
    with imports_undone(MODULE):
        yield tmp_path


def _main(*args: str) -> tuple[int, list[str]]:
    """One command as a fresh process would run it; the target calls it made."""
    with imports_undone(MODULE), registry.isolated():
        code = main(list(args))
        module = sys.modules.get(MODULE)
        return code, list(getattr(module, "CALLS", []))


def _gate(root: Path, tag: str, *extra: str) -> tuple[int, list[str]]:
    return _main(
        "gate",
        "-c",
        str(root / "regressed.yaml"),
        "--baseline",
        str(root / "base.json"),
        "--json",
        str(root / f"{tag}.json"),
        "--out",
        str(root / "run.json"),
        *extra,
    )


def _saved(root: Path) -> list[str]:
    """The case of every row (every trial's, with repeats) the checkpoint kept."""
    saved = read_checkpoint(checkpoint_path(root / "run.json", root))
    assert saved is not None
    trials = [case for case, done in saved.completed_trials.items() for _ in done]
    return sorted(list(saved.completed) + trials)


def test_a_killed_gate_resumed_stops_where_an_uninterrupted_one_does(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = _main("run", "-c", str(project / "same.yaml"), "--out", str(project / "base.json"))
    assert code == 0
    full_code, full_calls = _gate(project, "full")
    full = json.loads((project / "full.json").read_text())
    full_ids = sorted(read_artifact(project / "run.json").result.ids())
    assert full["stopped_early"]["cases_run"] < N  # it does stop early

    monkeypatch.setenv("KILL_AT", "130")  # in the second or third batch, past the first look
    capsys.readouterr()
    killed, _ = _gate(project, "killed")
    assert killed == 130
    assert "rerun with --resume" in capsys.readouterr().err
    kept = _saved(project)
    assert 100 <= len(kept) < 130

    monkeypatch.delenv("KILL_AT")
    resumed_code, resumed_calls = _gate(project, "resumed", "--resume")
    resumed = json.loads((project / "resumed.json").read_text())
    assert resumed_code == full_code == 1
    assert resumed["stopped_early"] == full["stopped_early"]
    assert resumed["checks"] == full["checks"]
    assert sorted(read_artifact(project / "run.json").result.ids()) == full_ids
    # only what the killed gate had not finished ran again
    assert sorted(kept + resumed_calls) == sorted(full_calls)
    assert sorted(set(full_calls)) == full_ids
    assert read_checkpoint(checkpoint_path(project / "run.json", project)) is None


def test_resume_without_stop_early_is_one_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = _main("gate", "-c", str(project / "same.yaml"), "--no-stop-early", "--resume")
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "--resume" in err
    assert "stop_early" in err


def test_a_shard_with_stop_early_is_refused_naming_the_key(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, calls = _main("run", "-c", str(project / "same.yaml"), "--shard", "1/2")
    assert code == 2
    assert calls == []  # refused before anything runs
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "stop_early" in err
    assert "shard 1/2" in err
