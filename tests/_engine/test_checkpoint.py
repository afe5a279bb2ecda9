"""The run checkpoint: durable appends, torn tails, identity-checked resume, one writer."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import pytest

from evalkit._engine.checkpoint import (
    Checkpoint,
    RunIdentity,
    checkpoint_path,
    config_fingerprint,
    read_checkpoint,
    run_identity,
)
from evalkit._engine.execute import evaluate
from evalkit._model.results import CaseResult
from evalkit._spec.artifact_rows import _row_dict
from evalkit._spec.config import EvalkitConfig
from evalkit.errors import ArtifactError, RuntimeFailure
from evalkit.goldens import GoldenCase, GoldenSet
from evalkit.targets.base import TargetResponse
from evalkit.targets.callable import CallableTarget

IDENTITY = RunIdentity("cfg", "gold", {"recall@1": "m1", "ndcg@10": "m2"}, None)


def ok(case_id: str, score: float = 1.0) -> CaseResult:
    response = TargetResponse([f"{case_id}-a", "x"], latency_ms=12.5, meta={"cost_usd": 0.25})
    return CaseResult(case_id, response, {"recall@1": score, "ndcg@10": score / 2})


def failed(case_id: str) -> CaseResult:
    return CaseResult(case_id, None, {}, error="target 't', case: HTTP 503 twice")


def as_doc(row: CaseResult) -> dict[str, Any]:
    return _row_dict(row, "test")


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return checkpoint_path(tmp_path / "runs" / "out.json", tmp_path)


def write(path: Path, rows: list[CaseResult], identity: RunIdentity = IDENTITY) -> None:
    with Checkpoint.open(path, identity, resume=False) as ckpt:
        for row in rows:
            ckpt.append(row)


# --- writing and reading ------------------------------------------------------------------


def test_checkpoint_lives_under_dot_evalkit_one_per_output(tmp_path: Path) -> None:
    made = checkpoint_path(Path("a/b/run.json"), tmp_path)
    assert made.parent == tmp_path / ".evalkit" / "checkpoints"
    assert made.name.startswith("run.json-")
    assert made.name.endswith(".checkpoint.jsonl")
    assert checkpoint_path("run.json.gz", tmp_path).name.startswith("run.json.gz-")
    # the same output (however it is spelled) finds the same checkpoint; another does not
    assert checkpoint_path(Path("a/b/../b/run.json").absolute(), tmp_path) == made
    assert checkpoint_path(Path("a/c/run.json"), tmp_path) != made


def test_rows_round_trip_and_failures_are_not_completed(path: Path) -> None:
    text_row = CaseResult(
        "t1", TargetResponse(text="Canberra", latency_ms=3.0, meta={"judge_score": 4}), {"m": 4.0}
    )
    rows = [ok("q1"), failed("q2"), text_row]
    write(path, rows)
    contents = read_checkpoint(path)
    assert contents is not None
    assert contents.identity == IDENTITY
    assert not contents.torn
    assert [as_doc(r) for r in contents.rows.values()] == [as_doc(r) for r in rows]
    assert list(contents.completed) == ["q1", "t1"]
    assert list(contents.failed) == ["q2"]


def test_the_header_and_each_row_are_one_json_line(path: Path) -> None:
    write(path, [ok("q1"), ok("q2")])
    lines = path.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    assert header["format"] == "evalkit-checkpoint"
    assert header["version"] == 1
    assert header["identity"] == IDENTITY.to_json()
    assert [json.loads(line)["id"] for line in lines[1:]] == ["q1", "q2"]


def test_each_append_is_on_disk_and_fsynced_before_it_returns(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def counting(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    with Checkpoint.open(path, IDENTITY, resume=False) as ckpt:
        monkeypatch.setattr(os, "fsync", counting)
        for i in range(3):
            ckpt.append(ok(f"q{i}"))
            assert len(synced) == i + 1
            # Another reader (a resume after SIGKILL) sees the row while we still run.
            seen = read_checkpoint(path)
            assert seen is not None
            assert f"q{i}" in seen.completed


def test_a_later_line_for_the_same_case_wins(path: Path) -> None:
    write(path, [failed("q1"), ok("q2"), ok("q1", 0.0)])
    contents = read_checkpoint(path)
    assert contents is not None
    assert set(contents.completed) == {"q1", "q2"}
    assert contents.completed["q1"].metrics["recall@1"] == 0.0
    assert contents.failed == {}


def test_no_file_reads_as_no_checkpoint(path: Path) -> None:
    assert read_checkpoint(path) is None


# --- crashes: torn tails and damage -------------------------------------------------------


@pytest.mark.parametrize("tail", [b'{"id": "q3", "metr', b'{"id": "q3", "metr\n', b"\x00\x00\x00"])
def test_a_torn_last_line_is_dropped_and_cut_off_on_resume(path: Path, tail: bytes) -> None:
    write(path, [ok("q1"), ok("q2")])
    intact = path.read_bytes()
    with path.open("ab") as fh:
        fh.write(tail)
    contents = read_checkpoint(path)
    assert contents is not None
    assert contents.torn
    assert list(contents.completed) == ["q1", "q2"]
    with Checkpoint.open(path, IDENTITY, resume=True) as ckpt:
        assert path.read_bytes() == intact  # the partial line is gone before any append
        ckpt.append(ok("q3"))
    again = read_checkpoint(path)
    assert again is not None
    assert not again.torn
    assert list(again.completed) == ["q1", "q2", "q3"]


def test_a_torn_header_is_no_checkpoint_and_a_resume_starts_fresh(path: Path) -> None:
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"format": "evalkit-checkpoint", "vers')
    assert read_checkpoint(path) is None
    with Checkpoint.open(path, IDENTITY, resume=True) as ckpt:
        assert not ckpt.resumed
        assert ckpt.completed == {}
        ckpt.append(ok("q1"))
    contents = read_checkpoint(path)
    assert contents is not None
    assert list(contents.completed) == ["q1"]


def test_a_damaged_line_before_the_last_is_corruption_naming_the_line(path: Path) -> None:
    write(path, [ok("q1"), ok("q2"), ok("q3")])
    lines = path.read_bytes().split(b"\n")
    lines[2] = lines[2][:20]
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(ArtifactError) as info:
        read_checkpoint(path)
    message = str(info.value)
    assert f"{path}:3: damaged checkpoint line" in message
    assert "delete" in message
    assert "\n" not in message


def test_a_row_with_a_broken_shape_is_reported_with_its_line(path: Path) -> None:
    write(path, [ok("q1")])
    with path.open("a") as fh:
        fh.write(json.dumps({"id": "q2", "metrics": {"recall@1": "high"}}) + "\n")
        fh.write(json.dumps(as_doc(ok("q3"))) + "\n")
    with pytest.raises(ArtifactError, match=rf"{path}:3: case 'q2': metric 'recall@1'"):
        read_checkpoint(path)


def test_a_file_that_is_not_a_checkpoint_is_refused(path: Path) -> None:
    path.parent.mkdir(parents=True)
    path.write_text('{"schema_version": 1, "rows": []}\n')
    with pytest.raises(ArtifactError, match=r":1: not an evalkit checkpoint.*--out"):
        Checkpoint.open(path, IDENTITY, resume=True)


def test_a_checkpoint_of_another_version_is_refused(path: Path) -> None:
    write(path, [ok("q1")])
    lines = path.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["version"] = 2
    path.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    with pytest.raises(ArtifactError, match=r"checkpoint version 2 is not supported"):
        read_checkpoint(path)


# --- resume rules -------------------------------------------------------------------------


def test_resume_keeps_completed_rows_and_runs_failures_again(path: Path) -> None:
    write(path, [ok("q1"), failed("q2")])
    with Checkpoint.open(path, IDENTITY, resume=True) as ckpt:
        assert ckpt.resumed
        assert list(ckpt.completed) == ["q1"]
        assert list(ckpt.failed_before) == ["q2"]


@pytest.mark.parametrize(
    ("changed", "expected"),
    [
        (RunIdentity("cfg2", "gold", IDENTITY.metrics), "target, metrics, judges or plugins"),
        (RunIdentity("cfg", "gold2", IDENTITY.metrics), "the golden set changed"),
        (
            RunIdentity("cfg", "gold", {"recall@1": "m1", "ndcg@10": "NEW"}),
            "the definition of ndcg@10 changed",
        ),
        (
            RunIdentity("cfg", "gold", {"recall@1": "m1"}),
            "the metrics changed (checkpoint: recall@1, ndcg@10; now: recall@1)",
        ),
        (RunIdentity("cfg", "gold", IDENTITY.metrics, "2/4"), "shard changed"),
    ],
)
def test_resume_under_a_changed_run_is_refused_saying_what_changed(
    path: Path, changed: RunIdentity, expected: str
) -> None:
    write(path, [ok("q1")])
    before = path.read_bytes()
    with pytest.raises(ArtifactError) as info:
        Checkpoint.open(path, changed, resume=True)
    message = str(info.value)
    assert message.startswith(f"{path}: cannot resume")
    assert expected in message
    assert "delete the checkpoint" in message
    assert path.read_bytes() == before  # nothing paid for was thrown away
    # and the refusal released the lock
    with Checkpoint.open(path, IDENTITY, resume=True) as ckpt:
        assert list(ckpt.completed) == ["q1"]


def test_a_fresh_run_refuses_to_overwrite_finished_cases(path: Path) -> None:
    write(path, [ok("q1"), ok("q2"), failed("q3")])
    with pytest.raises(ArtifactError) as info:
        Checkpoint.open(path, IDENTITY, resume=False)
    assert "holds 2 finished case(s)" in str(info.value)
    assert "--resume" in str(info.value)


def test_a_checkpoint_with_only_failures_is_replaced_without_fuss(path: Path) -> None:
    write(path, [failed("q1")])
    other = RunIdentity("cfg2", "gold", IDENTITY.metrics)
    for resume in (False, True):
        with Checkpoint.open(path, other, resume=resume) as ckpt:
            assert ckpt.completed == {}
            assert not ckpt.resumed
            contents = read_checkpoint(path)
            assert contents is not None
            assert contents.identity == other
            assert contents.rows == {}
        write(path, [failed("q1")])


def test_evaluate_with_a_checkpoint_invokes_only_missing_cases(path: Path) -> None:
    goldens = GoldenSet(
        [GoldenCase(id=f"q{i}", query=f"query {i}", relevant=frozenset({"d"})) for i in range(6)]
    )
    calls: list[str] = []
    blips = ["q4"]  # q4 fails once, the first time it is asked

    def search(case: GoldenCase) -> list[str]:
        calls.append(case.id)
        if case.id in blips:
            blips.remove(case.id)
            raise ConnectionError("blip")
        return ["d"] if case.id != "q2" else ["x", "d"]

    target = CallableTarget(search, name="s")
    with Checkpoint.open(path, IDENTITY, resume=False) as ckpt:
        first = evaluate(target, goldens, ["recall@1"], on_row=lambda _i, r: ckpt.append(r))
    assert [r.case_id for r in first.per_query if r.error] == ["q4"]
    calls.clear()
    with Checkpoint.open(path, IDENTITY, resume=True) as ckpt:
        second = evaluate(
            target,
            goldens,
            ["recall@1"],
            skip=ckpt.completed,
            on_row=lambda _i, r: ckpt.append(r),
        )
    assert calls == ["q4"]
    assert [r.case_id for r in second.per_query] == ["q4"]
    contents = read_checkpoint(path)
    assert contents is not None
    assert sorted(contents.completed) == goldens.ids()


# --- one writer, clean ends, write failures -----------------------------------------------


def test_a_second_writer_is_refused_while_the_first_runs(path: Path) -> None:
    first = Checkpoint.open(path, IDENTITY, resume=False)
    try:
        with pytest.raises(ArtifactError, match=r"another `evalkit run` is writing"):
            Checkpoint.open(path, IDENTITY, resume=True)
    finally:
        first.close()
    Checkpoint.open(path, IDENTITY, resume=True).close()


def test_discard_removes_the_checkpoint_and_its_lock(path: Path) -> None:
    ckpt = Checkpoint.open(path, IDENTITY, resume=False)
    ckpt.append(ok("q1"))
    ckpt.discard()
    assert sorted(p.name for p in path.parent.iterdir()) == []


def test_a_checkpoint_that_recorded_nothing_is_not_left_behind(path: Path) -> None:
    with Checkpoint.open(path, IDENTITY, resume=False):
        assert path.exists()  # the header is written up front
    assert list(path.parent.iterdir()) == []


def test_a_checkpoint_holding_only_failures_stays_for_the_record(path: Path) -> None:
    write(path, [failed("q1")])
    assert path.exists()


def test_appending_after_close_is_an_error(path: Path) -> None:
    write(path, [ok("q0")])
    ckpt = Checkpoint.open(path, IDENTITY, resume=True)
    ckpt.close()
    ckpt.close()  # idempotent
    with pytest.raises(RuntimeFailure, match=r"checkpoint is closed; cannot record 'q1'"):
        ckpt.append(ok("q1"))


def test_meta_that_json_cannot_hold_is_refused_naming_the_case(path: Path) -> None:
    row = CaseResult("q9", TargetResponse(["a"], meta={"when": object()}), {"recall@1": 1.0})
    with (
        Checkpoint.open(path, IDENTITY, resume=False) as ckpt,
        pytest.raises(ArtifactError, match=r"case 'q9': its meta holds a value JSON"),
    ):
        ckpt.append(row)


def test_a_full_disk_stops_the_run_naming_the_case_and_file(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(fd: int, data: Any) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    with Checkpoint.open(path, IDENTITY, resume=False) as ckpt:
        monkeypatch.setattr(os, "write", full)
        with pytest.raises(RuntimeFailure) as info:
            ckpt.append(ok("q1"))
    message = str(info.value)
    assert str(path) in message
    assert "case 'q1'" in message
    assert "No space left on device" in message


# --- identity -----------------------------------------------------------------------------


def config(**changes: Any) -> EvalkitConfig:
    doc: dict[str, Any] = {
        "goldens": "g.jsonl",
        "checks": "c.yaml",
        "metrics": ["recall@1"],
        "target": {"python": "mod:factory", "args": {"version": "v1"}},
    }
    doc.update(changes)
    return EvalkitConfig.model_validate(doc)


def test_config_fingerprint_ignores_how_the_run_is_executed() -> None:
    base = config_fingerprint(config())
    same = [
        config(concurrency=32),
        config(rate_limit=5.0),
        config(case_timeout_s=3.0),
        config(output="elsewhere.json"),
        config(checks="other-checks.yaml"),
        config(n_resamples=50),
    ]
    assert {config_fingerprint(c) for c in same} == {base}


def test_config_fingerprint_tracks_what_the_run_computes() -> None:
    base = config_fingerprint(config())
    changed = [
        config(target={"python": "mod:factory", "args": {"version": "v2"}}),
        config(metrics=["recall@1", "ndcg@10"]),
        config(plugins=["my_metrics"]),
        config(judge={"metric": "helpful", "model": "claude-haiku-4-5", "rubric": "Be right."}),
        config(target={"http": {"url": "http://x/${HOST}", "extract": "ids"}}),
    ]
    prints = [config_fingerprint(c) for c in changed]
    assert base not in prints
    assert len(set(prints)) == len(prints)


def test_run_identity_carries_metric_definitions_and_the_whole_goldens() -> None:
    goldens = GoldenSet([GoldenCase(id="a", query="q")])
    identity = run_identity(config(metrics=["recall@1", "ndcg@10"]), goldens, "1/2")
    assert list(identity.metrics) == ["recall@1", "ndcg@10"]
    assert identity.goldens == goldens.fingerprint()
    assert identity.shard == "1/2"
    assert RunIdentity.from_json(identity.to_json(), "x") == identity


@pytest.mark.parametrize("concurrency", [1, 4])
def test_resuming_a_run_that_had_finished_every_case_invokes_nothing(concurrency: int) -> None:
    goldens = GoldenSet([GoldenCase(id=f"q{i}", query="x") for i in range(5)])
    calls: list[str] = []

    def search(case: GoldenCase) -> list[str]:
        calls.append(case.id)
        return []

    result = evaluate(
        CallableTarget(search, name="s"),
        goldens,
        ["recall@1"],
        skip=goldens.ids(),
        concurrency=concurrency,
        case_timeout_s=5.0,
    )
    assert result.per_query == []
    assert calls == []
