"""`repeats: k` checkpoints every finished trial, and a resumed run invokes only the missing
(case, trial) pairs.

The interruption is deterministic: the target stops its own process (SIGKILL, or SIGINT as
Ctrl-C would) when it is called for the (N+1)-th time, so exactly N trials have finished and
been checkpointed (concurrency 1: a trial's row is written before the next call starts).
Every call is logged to a file by the target, so the test counts what each process invoked.
The interrupted run is a real subprocess; the other runs call the CLI in process.
"""

from __future__ import annotations

import json
import signal
from collections import Counter
from pathlib import Path

import pytest

from evalkit import CallableTarget, GoldenCase, GoldenSet, register_metric
from evalkit._engine.checkpoint import Checkpoint, checkpoint_path, read_checkpoint, run_identity
from evalkit._engine.trials import evaluate_repeated
from evalkit._model.results import TRIALS_KEY, CaseResult
from evalkit.errors import ArtifactError, InputError
from evalkit.targets.base import TargetResponse
from helpers.artefact_docs import load_artefact
from helpers.cli import evalkit, evalkit_process, write_files

# --- in process: evaluate_repeated with trials already done -------------------------------


@register_metric("trial_words", higher_is_better=True)
def trial_words(response: TargetResponse, case: GoldenCase) -> float:
    return float(len((response.text or "").split()))


def row(case_id: str, value: float) -> CaseResult:
    return CaseResult(case_id, TargetResponse(text="kept"), {"trial_words": value})


def test_only_missing_trials_are_invoked_and_each_trial_is_reported() -> None:
    calls: Counter[str] = Counter()

    def answer(case: GoldenCase) -> str:
        calls[case.id] += 1
        return " ".join(["w"] * (10 * calls[case.id]))  # 10, 20, 30 words

    goldens = GoldenSet(GoldenCase(id=f"c{i}", query="q") for i in range(3))
    done = {"c0": {1: row("c0", 1.0), 2: row("c0", 2.0)}, "c1": {2: row("c1", 5.0)}}
    trials: list[tuple[int, str]] = []
    merged: list[str] = []

    def on_trial(trial: int, _index: int, r: CaseResult) -> None:
        trials.append((trial, r.case_id))

    target = CallableTarget(answer, name="t")
    result = evaluate_repeated(
        target, goldens, ["trial_words"], repeats=3, done_trials=done, on_trial=on_trial,
        on_row=lambda _i, r: merged.append(r.case_id),
    )  # fmt: skip
    assert calls == {"c0": 1, "c1": 2, "c2": 3}
    # pass t runs the cases still missing trial t, in golden-set order
    assert trials == [(1, "c1"), (1, "c2"), (2, "c2"), (3, "c0"), (3, "c1"), (3, "c2")]
    assert merged == ["c0", "c1", "c2"]  # each once, when its last missing trial finished
    by_id = {r.case_id: r for r in result.per_query}
    meta = {cid: r.response.meta[TRIALS_KEY] for cid, r in by_id.items() if r.response}
    assert meta["c0"] == {"trial_words": [1.0, 2.0, 10.0]}
    assert meta["c1"] == {"trial_words": [10.0, 5.0, 20.0]}
    assert meta["c2"] == {"trial_words": [10.0, 20.0, 30.0]}
    assert by_id["c1"].metrics["trial_words"] == pytest.approx(35 / 3)


def test_a_repeated_run_that_is_already_complete_invokes_nothing() -> None:
    def answer(case: GoldenCase) -> str:
        raise AssertionError("nothing should run")

    goldens = GoldenSet([GoldenCase(id="c0", query="q")])
    done = {"c0": {1: row("c0", 1.0), 2: row("c0", 3.0)}}
    result = evaluate_repeated(
        CallableTarget(answer, name="t"), goldens, ["trial_words"], repeats=2, done_trials=done
    )
    assert result.per_query[0].metrics == {"trial_words": 2.0}
    with pytest.raises(InputError, match="done_trials, not skip"):
        evaluate_repeated(
            CallableTarget(answer, name="t"), goldens, ["trial_words"], repeats=2, skip=["c0"]
        )


def test_trial_lines_round_trip_and_a_bad_trial_number_names_its_line(tmp_path: Path) -> None:
    from evalkit._spec.config import EvalkitConfig

    cfg = EvalkitConfig.model_validate(
        {"goldens": "g", "checks": "c", "metrics": ["trial_words"], "target": {"python": "a:b"}}
    )
    goldens = GoldenSet([GoldenCase(id="c0", query="q"), GoldenCase(id="c1", query="q")])
    path = tmp_path / "run.json.checkpoint.jsonl"
    with Checkpoint.open(path, run_identity(cfg, goldens), resume=False) as ckpt:
        ckpt.append(row("c0", 1.0), trial=1)
        ckpt.append(CaseResult("c1", None, {}, error="boom"), trial=1)
        ckpt.append(row("c0", 2.0), trial=2)
    contents = read_checkpoint(path)
    assert contents is not None
    assert contents.rows == {}  # no single-trial rows
    assert {c: sorted(t) for c, t in contents.completed_trials.items()} == {"c0": [1, 2]}
    assert contents.failed_trials == 1
    assert contents.saved == 2
    # a plain rerun would throw the finished trials away: refused, as for cases
    with pytest.raises(ArtifactError, match="holds 2 finished trial"):
        Checkpoint.open(path, run_identity(cfg, goldens), resume=False)
    lines = path.read_text().splitlines()
    assert json.loads(lines[1])["trial"] == 1
    path.write_text("\n".join([*lines, lines[3].replace('"trial":2', '"trial":0')]) + "\n")
    with pytest.raises(ArtifactError, match=r"checkpoint\.jsonl:5: 'trial' must be an integer"):
        read_checkpoint(path)


# --- a real process, stopped deterministically after N calls ------------------------------

N_CASES = 5
REPEATS = 3
STOP_AFTER = 7  # pass 1 (5 cases) + 2 cases of pass 2

TARGET = """
import os
import signal
import time

from evalkit import CallableTarget

CALLS = 0


def make_target():
    log = os.environ["TRIAL_LOG"]
    stop_after = int(os.environ.get("TRIAL_STOP_AFTER", "0"))
    stop_with = getattr(signal, os.environ.get("TRIAL_STOP_WITH", "SIGKILL"))
    base = int(os.environ.get("TRIAL_BASE", "0"))
    fail_case = os.environ.get("TRIAL_FAIL_CASE")  # that case's second call raises
    seen = {}

    def answer(case):
        global CALLS
        if stop_after and CALLS == stop_after:
            os.kill(os.getpid(), stop_with)
            time.sleep(60)  # never reached for SIGKILL; SIGINT interrupts the sleep
        CALLS += 1
        seen[case.id] = seen.get(case.id, 0) + 1
        with open(log, "a") as fh:
            fh.write(f"{base + CALLS} {case.id}\\n")
        if case.id == fail_case and seen[case.id] == 2:
            raise RuntimeError("flaky backend")
        # The answer's length names the call, so the artefact shows which calls it kept.
        return " ".join(["w"] * (base + CALLS))

    return CallableTarget(answer, name="counted")
"""

CONFIG = f"""\
goldens: goldens.jsonl
checks: checks.yaml
metrics: [answer_length]
repeats: {REPEATS}
concurrency: 1
target:
  python: "counted_target:make_target"
"""


def write_project(root: Path) -> None:
    goldens = "".join(
        json.dumps({"id": f"c{i}", "query": "q", "expected": "x"}) + "\n" for i in range(N_CASES)
    )
    write_files(
        root,
        {
            "counted_target.py": TARGET,
            "goldens.jsonl": goldens,
            "checks.yaml": "checks:\n  - {id: short, metric: answer_length, op: '<=', "
            "threshold: 10000}\n",
            "evalkit.yaml": CONFIG,
        },
    )


def calls(log: Path) -> list[tuple[int, str]]:
    if not log.exists():
        return []
    return [(int(n), cid) for n, cid in (line.split() for line in log.read_text().splitlines())]


@pytest.mark.parametrize("how", ["SIGKILL", "SIGINT"])
def test_an_interrupted_repeated_run_resumes_only_the_missing_trials(
    tmp_path: Path, how: str
) -> None:
    write_project(tmp_path)
    log = tmp_path / "calls.log"
    out = tmp_path / "run.json"
    ckpt = checkpoint_path(out, tmp_path)
    shown = ckpt.relative_to(tmp_path)  # as messages name it: under the config's folder
    env = {"TRIAL_LOG": str(log), "TRIAL_STOP_AFTER": str(STOP_AFTER), "TRIAL_STOP_WITH": how}
    # The target signals its own process: a real one, so the test runner survives it.
    first = evalkit_process("run", "--out", out, cwd=tmp_path, env=env)
    total = N_CASES * REPEATS
    if how == "SIGKILL":
        assert first.returncode == -signal.SIGKILL, first.stderr
    else:
        assert first.returncode == 130, first.stderr
        assert first.stderr.strip() == (
            f"evalkit: interrupted: {STOP_AFTER} of {total} trial(s) are saved in {shown}; "
            "rerun with --resume to run only the rest"
        )
    assert not out.exists()
    before = calls(log)
    assert [n for n, _ in before] == list(range(1, STOP_AFTER + 1))
    saved = read_checkpoint(ckpt)
    assert saved is not None
    kept = {cid: sorted(t) for cid, t in saved.completed_trials.items()}
    assert kept == {"c0": [1, 2], "c1": [1, 2], "c2": [1], "c3": [1], "c4": [1]}

    resumed = evalkit(
        "run",
        "--out",
        out,
        "--resume",
        cwd=tmp_path,
        env={"TRIAL_LOG": str(log), "TRIAL_BASE": "1000"},
    )
    assert resumed.returncode == 0, resumed.stderr
    assert (
        f"resuming {shown}: {STOP_AFTER} of {total} trial(s) (0 of {N_CASES} case(s) complete) "
        "already done" in resumed.stderr
    )
    after = calls(log)[len(before) :]
    # the resumed run invoked exactly the missing (case, trial) pairs: 8 calls
    assert len(after) == total - STOP_AFTER
    assert Counter(cid for _, cid in after) == {"c0": 1, "c1": 1, "c2": 2, "c3": 2, "c4": 2}
    assert not ckpt.exists()
    rows = {r["id"]: r for r in load_artefact(out)["rows"]}
    used = sorted(v for r in rows.values() for v in r["meta"][TRIALS_KEY]["answer_length"])
    # every call's answer is used exactly once: the 7 checkpointed and the 8 resumed
    assert used == [float(n) for n, _ in before] + [float(n) for n, _ in after]
    for r in rows.values():
        trials = r["meta"][TRIALS_KEY]["answer_length"]
        assert len(trials) == REPEATS
        assert r["metrics"]["answer_length"] == pytest.approx(sum(trials) / REPEATS)


def test_a_failed_trial_fails_its_case_and_is_retried_alone(tmp_path: Path) -> None:
    write_project(tmp_path)
    log = tmp_path / "calls.log"
    out = tmp_path / "run.json"
    env = {"TRIAL_LOG": str(log), "TRIAL_FAIL_CASE": "c1"}
    first = evalkit("run", "--out", out, cwd=tmp_path, env=env)
    assert first.returncode == 3, first.stderr
    assert "c1: trial 2: target 'counted', case 'c1' raised RuntimeError: flaky" in first.stderr
    assert len(calls(log)) == N_CASES * REPEATS  # every other trial still ran
    saved = read_checkpoint(checkpoint_path(out, tmp_path))
    assert saved is not None
    assert saved.failed_trials == 1
    assert sorted(saved.completed_trials["c1"]) == [1, 3]

    before = len(calls(log))
    resumed = evalkit("run", "--out", out, "--resume", cwd=tmp_path, env={"TRIAL_LOG": str(log)})
    assert resumed.returncode == 0, resumed.stderr
    assert (
        "14 of 15 trial(s) (4 of 5 case(s) complete) already done; 1 failed trial(s) run again"
        in resumed.stderr
    )
    assert [cid for _, cid in calls(log)[before:]] == ["c1"]  # only the failed trial
    rows = {r["id"]: r for r in load_artefact(out)["rows"]}
    assert rows["c1"]["error"] is None
    assert len(rows["c1"]["meta"][TRIALS_KEY]["answer_length"]) == REPEATS
