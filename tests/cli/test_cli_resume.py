"""`evalkit run` loses nothing paid for: interrupted (SIGINT, SIGKILL) or failing runs resume
with only the missing cases, and sharded runs merge back into the unsharded run.

The target is a real HTTP search service on 127.0.0.1 that counts requests per case.
Interruptions use a real subprocess; the other flows call the CLI's ``main()`` in
process (same code path, much faster).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evalkit._engine.checkpoint import checkpoint_path, read_checkpoint
from evalkit.cli import main
from helpers.artefact_docs import load_artefact
from helpers.child_evidence import FAULTHANDLER_ENV, communicate, wait_until
from servers.search import RecordedRequest, Reply, SearchServer

N_CASES = 40
CONCURRENCY = 2


@dataclass
class Project:
    root: Path
    config: Path
    server: SearchServer
    broken: set[str]  # case ids the service answers without results (a failing case)

    def out(self, name: str) -> Path:
        return self.root / "runs" / name


def write_project(root: Path, server: SearchServer, *, metrics: list[str] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    with (root / "goldens.jsonl").open("w") as fh:
        for i in range(N_CASES):
            case = {"id": f"q{i:02d}", "query": f"query {i}", "relevant": [f"doc-q{i:02d}"]}
            fh.write(json.dumps(case) + "\n")
    (root / "checks.yaml").write_text(
        "checks:\n  - id: floor\n    metric: recall@1\n    op: '>='\n    threshold: 0.0\n"
    )
    config = root / "evalkit.yaml"
    config.write_text(
        json.dumps(
            {
                "name": "resumable",
                "goldens": "goldens.jsonl",
                "checks": "checks.yaml",
                "metrics": metrics or ["recall@1", "ndcg@10"],
                "concurrency": CONCURRENCY,
                "target": {
                    "name": "search",
                    "http": {
                        "url": server.url("/search"),
                        "payload": {"id": "{{id}}", "q": "{{query}}"},
                        "extract": "results[].id",
                        "timeout_s": 5,
                    },
                },
            }
        )
    )
    return config


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    broken: set[str] = set()

    def answer(request: RecordedRequest) -> dict[str, Any]:
        if request.case_id in broken:
            return {"error": "index unavailable"}
        n = int((request.case_id or "q0")[1:])
        # Rank the relevant document first for even cases, second for odd ones.
        ids = [f"doc-q{n:02d}", "other"] if n % 2 == 0 else ["other", f"doc-q{n:02d}"]
        return {"results": [{"id": i} for i in ids]}

    with SearchServer() as server:
        server.route("/search", Reply(json=answer, delay_s=0.02))
        yield Project(tmp_path, write_project(tmp_path, server), server, broken)


def cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def comparable(path: Path) -> dict[str, Any]:
    """An artefact without what differs between two honest runs: clocks, timings, git state."""
    doc: dict[str, Any] = load_artefact(path)
    for key in ("created_at", "git"):
        doc.pop(key)
    for row in doc["rows"]:
        row.pop("latency_ms")
    return doc


def uninterrupted(project: Project, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    out = project.out("full.json")
    code, stdout, _ = cli(capsys, "run", "-c", project.config, "--out", out)
    assert code == 0
    assert f"wrote {out} ({N_CASES} cases)" in stdout
    assert not checkpoint_path(out, project.root).exists()
    project.server.clear()
    return comparable(out)


# --- interrupted for real -----------------------------------------------------------------


def spawn(*args: str | Path) -> subprocess.Popen[str]:
    code = "import sys; from evalkit.cli import main; sys.exit(main())"
    env = {k: v for k, v in os.environ.items() if k != "EVALKIT_DEBUG"} | dict(FAULTHANDLER_ENV)
    return subprocess.Popen(
        [sys.executable, "-c", code, *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def wait_for_rows(path: Path, at_least: int, proc: subprocess.Popen[str]) -> None:
    wait_until(
        lambda: path.exists() and path.read_bytes().count(b"\n") > at_least,
        what=f"{path} to reach {at_least} rows",
        proc=proc,
        stderr=lambda: proc.communicate()[1],
    )


@pytest.mark.parametrize("how", ["SIGINT", "SIGKILL"])
def test_an_interrupted_run_resumes_without_repeating_checkpointed_cases(
    project: Project, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    expected = uninterrupted(project, capsys)
    out = project.out("part.json")
    ckpt = checkpoint_path(out, project.root)
    proc = spawn("run", "-c", project.config, "--out", out)
    wait_for_rows(ckpt, 10, proc)
    proc.send_signal(signal.SIGINT if how == "SIGINT" else signal.SIGKILL)
    _, stderr = communicate(proc, what=f"the run to end on {how}")
    saved = read_checkpoint(ckpt)
    assert saved is not None
    done = set(saved.completed)
    assert 10 <= len(done) < N_CASES
    if how == "SIGINT":
        assert proc.returncode == 130
        assert stderr.strip() == (
            f"evalkit: interrupted: {len(done)} of {N_CASES} case(s) are saved in {ckpt}; "
            "rerun with --resume to run only the rest"
        )
    else:
        assert proc.returncode == -signal.SIGKILL
        with ckpt.open("ab") as fh:  # as if it died in the middle of writing a row
            fh.write(b'{"id": "q39", "metrics": {"recall@1": 1.0}, "outp')
    assert not out.exists()  # no artefact from a run that did not finish
    # What the interrupted run sent but did not checkpoint (in flight, or answered and not
    # yet written when it died).  How many that is depends on scheduling, so the test
    # counts it instead of bounding it.
    sent_before = project.server.counts_by_case("/search")
    unsaved = set(sent_before) - done

    code, _, stderr = cli(capsys, "run", "-c", project.config, "--out", out, "--resume")
    assert code == 0, stderr
    assert f"resuming {ckpt}: {len(done)} of {N_CASES} case(s) already done" in stderr
    assert comparable(out) == expected
    assert not ckpt.exists()
    counts = project.server.counts_by_case("/search")
    assert set(counts) == set(expected_ids())
    assert all(counts[cid] == 1 for cid in done)  # nothing checkpointed was invoked again
    # the resumed run sent every case that was not saved exactly once, and nothing else
    resent = {cid: counts[cid] - sent_before.get(cid, 0) for cid in counts}
    assert {cid for cid, n in resent.items() if n} == set(expected_ids()) - done
    assert all(n in (0, 1) for n in resent.values())
    assert sum(counts.values()) == N_CASES + len(unsaved)


def expected_ids() -> list[str]:
    return [f"q{i:02d}" for i in range(N_CASES)]


# --- failed cases ----------------------------------------------------------------------


def test_failed_cases_are_listed_kept_and_retried_alone_on_resume(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = uninterrupted(project, capsys)
    out = project.out("run.json")
    project.broken.update({"q03", "q17"})
    code, stdout, stderr = cli(capsys, "run", "-c", project.config, "--out", out)
    assert code == 3
    aside = project.out("run.failed.json")
    assert stdout == f"wrote {aside} ({N_CASES} cases)\n"
    lines = stderr.splitlines()
    assert lines[0] == f"evalkit: 2 of {N_CASES} case(s) failed; the rest were kept:"
    assert lines[1].startswith("  q03: target 'search', case 'q03': extract() raised")
    assert lines[2].startswith("  q17: target 'search', case 'q17': extract() raised")
    assert lines[3] == (
        f"evalkit: {out} is not written: a run with failed cases goes to {aside} instead "
        "(pass --allow-failed to write it anyway)"
    )
    assert "--resume" in lines[-1]
    assert not out.exists()
    failed_doc = load_artefact(aside)
    assert {r["id"]: r["error"] is not None for r in failed_doc["rows"]}["q03"] is True
    assert {r["id"] for r in failed_doc["rows"] if r["metrics"]} == set(expected_ids()) - {
        "q03",
        "q17",
    }

    # a plain rerun would throw the 38 finished cases away: refused
    code, _, stderr = cli(capsys, "run", "-c", project.config, "--out", out)
    assert code == 2
    assert stderr.count("\n") == 1
    assert "holds 38 finished case(s)" in stderr
    assert "--resume" in stderr

    project.broken.clear()
    project.server.clear()
    code, _, stderr = cli(capsys, "run", "-c", project.config, "--out", out, "--resume")
    assert code == 0, stderr
    assert "38 of 40 case(s) already done; 2 failed case(s) run again" in stderr
    assert project.server.counts_by_case("/search") == {"q03": 1, "q17": 1}
    assert comparable(out) == expected
    assert not checkpoint_path(out, project.root).exists()


def test_a_run_with_failed_cases_never_replaces_a_good_artefact(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    base = project.out("baseline.json")
    assert cli(capsys, "run", "-c", project.config, "--out", base)[0] == 0
    good = base.read_bytes()
    project.broken.update(expected_ids())  # the target is down: every case fails
    code, stdout, stderr = cli(capsys, "run", "-c", project.config, "--out", base)
    assert code == 3
    aside = project.out("baseline.failed.json")
    assert stdout == f"wrote {aside} ({N_CASES} cases)\n"
    assert f"{base} is left as it was: a run with failed cases goes to {aside}" in stderr
    assert base.read_bytes() == good  # the good baseline is untouched
    assert all(row["error"] for row in load_artefact(aside)["rows"])
    assert "Traceback" not in stderr

    # --allow-failed is the one way to put a failed run at OUT
    code, stdout, _ = cli(capsys, "run", "-c", project.config, "--out", base, "--allow-failed")
    assert code == 3
    assert stdout == f"wrote {base} ({N_CASES} cases)\n"
    assert all(row["error"] for row in load_artefact(base)["rows"])


def test_a_failed_shard_goes_beside_its_own_name(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    project.broken.update(expected_ids())
    code, stdout, _ = cli(capsys, "run", "-c", project.config, "--shard", "2/3")
    assert code == 3
    written = project.root / ".evalkit" / "runs" / "resumable.shard-2-of-3.failed.json"
    assert stdout.startswith(f"wrote {written} (")
    assert written.exists()
    assert not (written.parent / "resumable.shard-2-of-3.json").exists()


def test_resume_after_the_config_changed_is_refused(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    out = project.out("run.json")
    project.broken.add("q05")
    assert cli(capsys, "run", "-c", project.config, "--out", out)[0] == 3
    write_project(project.root, project.server, metrics=["recall@1"])
    code, _, stderr = cli(capsys, "run", "-c", project.config, "--out", out, "--resume")
    assert code == 2
    assert stderr.count("\n") == 1
    assert "cannot resume" in stderr
    assert "the metrics changed (checkpoint: recall@1, ndcg@10; now: recall@1)" in stderr


def test_resume_with_nothing_to_resume_runs_everything(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    out = project.out("run.json")
    code, _, stderr = cli(capsys, "run", "-c", project.config, "--out", out, "--resume")
    assert code == 0
    assert (
        f"nothing to resume at {checkpoint_path(out, project.root)}; running every case" in stderr
    )
    assert len(project.server.requests()) == N_CASES


def test_a_case_over_the_case_timeout_is_listed_as_failed(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    # The service never answers within the run (its sleep ends only when the server stops),
    # so every case is over the deadline by construction, however loaded the machine is.
    project.server.route("/search", Reply(json={"results": [{"id": "x"}]}, delay_s=3600))
    out = project.out("slow.json")
    code, _, stderr = cli(
        capsys,
        "run",
        "-c",
        project.config,
        "--out",
        out,
        "--case-timeout",
        "0.05",
        "--concurrency",
        "40",
    )
    assert code == 3
    assert f"evalkit: all {N_CASES} case(s) failed; the first: q00: timed out after 0.05s" in stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--rate-limit", "0"], "--rate-limit must be a positive number, got 0"),
        (["--case-timeout", "-1"], "--case-timeout must be a positive number, got -1"),
        (["--shard", "3"], "--shard '3': expected i/N"),
        (["--shard", "0/2"], "shards are numbered from 1 to 2"),
        (["--concurrency", "0"], "--concurrency"),
    ],
)
def test_bad_run_options_are_one_line_usage_errors(
    project: Project, capsys: pytest.CaptureFixture[str], args: list[str], expected: str
) -> None:
    code, _, stderr = cli(capsys, "run", "-c", project.config, *args)
    assert code == 2
    assert stderr.count("\n") == 1
    assert expected in stderr
    assert project.server.requests() == []


# --- shards through the CLI ---------------------------------------------------------------


def test_sharded_runs_merge_into_the_unsharded_run(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = uninterrupted(project, capsys)
    default_out = project.root / ".evalkit" / "runs"
    for i in (1, 2, 3):
        code, stdout, _ = cli(capsys, "run", "-c", project.config, "--shard", f"{i}/3")
        assert code == 0
        assert f", shard {i}/3)" in stdout
    shards = sorted(default_out.glob("resumable.shard-*-of-3.json"))
    assert [p.name for p in shards] == [f"resumable.shard-{i}-of-3.json" for i in (1, 2, 3)]
    assert sum(project.server.counts_by_case("/search").values()) == N_CASES
    merged = project.out("merged.json")
    code, stdout, _ = cli(capsys, "merge", *reversed(shards), "--out", merged)
    assert code == 0
    assert f"wrote {merged} ({N_CASES} cases from 3 shards)" in stdout
    doc = comparable(merged)
    assert doc.pop("shard") is None
    assert doc == {k: v for k, v in expected.items() if k != "shard"}

    code, _, stderr = cli(capsys, "merge", shards[0], shards[2], "--out", merged)
    assert code == 2
    assert stderr == (
        "evalkit: shard(s) 2/3 missing: got 2 of 3; "
        "pass every shard's artefact (did a matrix job fail?)\n"
    )
    code, _, stderr = cli(capsys, "merge", shards[0], project.out("full.json"), "--out", merged)
    assert code == 2
    assert "full.json: not a shard artefact" in stderr
    code, _, stderr = cli(capsys, "merge", project.root / "nope.json", "--out", merged)
    assert code == 2
    assert "nope.json: artefact file not found" in stderr


def test_an_interrupt_before_any_case_finished_leaves_nothing_behind(project: Project) -> None:
    project.server.route("/search", Reply(json={"results": []}, delay_s=5.0))
    out = project.out("early.json")
    ckpt = checkpoint_path(out, project.root)
    proc = spawn("run", "-c", project.config, "--out", out)
    wait_until(
        lambda: ckpt.exists() and bool(project.server.in_flight),  # started, nothing finished
        what="the run to start its first case",
        proc=proc,
        stderr=lambda: proc.communicate()[1],
    )
    proc.send_signal(signal.SIGINT)
    _, stderr = communicate(proc, what="the run to end on SIGINT")
    assert proc.returncode == 130
    assert stderr == "evalkit: interrupted before any case finished; nothing was saved\n"
    assert not out.exists()  # no artefact
    assert list(ckpt.parent.iterdir()) == []  # no checkpoint, no lock
