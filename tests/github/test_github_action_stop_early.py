"""``stop_early:`` in the Action (#47): a pull request stops as ``evalkit gate`` does,
a promotion runs every case.

The real gate (``pipeline_gate``) runs in process against the fake GitHub's branch store:
the default branch's push promotes a baseline with a row for every case, then a pull
request whose target regressed stops early, and its comment, JSON, outputs and exit code
are those of ``evalkit gate`` on the same config and baseline. The isolated target
(``isolate-target``) runs as the container runs it, ``evalkit action`` in a subprocess.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from actions_job import Job, make_job, pr_payload, push_payload
from fake_github import (  # noqa: F401  (the *_fixture name registers the fixture)
    FakeGitHub,
    fake_github_fixture,
)
from test_github_isolate_target import folder_fixture, run  # noqa: F401  (a fixture)

from evalkit._app.pipeline import GateAsk, gate_config
from evalkit._spec.artifact import read_artifact
from evalkit._spec.config import load_config
from evalkit.action.gate_runner import pipeline_gate
from evalkit.report.json_report import dumps

N_CASES = 1000
CONFIG = "stop-early"
# recall@1 of one relevant id: a case is right (1) or wrong (0); built-in, so declared in
# [0, 1] and read with the bounded (empirical-Bernstein) sequence. The regressed target
# gets wrong a third of what the unchanged one gets right (Δ ≈ -0.3).
TARGET = """
import hashlib


def make(mode="same"):
    cut = {"same": 0.9, "regressed": 0.6}[mode]

    def answer(case):
        u = int(hashlib.sha256(case.id.encode()).hexdigest()[:8], 16) / 16**8
        return ["a"] if u < cut else ["b"]

    return answer
"""
EVALKIT_YAML = f"""\
name: {CONFIG}
goldens: goldens.jsonl
checks: checks.yaml
metrics: [recall@1]
target:
  python: 'stop_early_target:make'
  args: {{mode: MODE}}
n_resamples: 200
stop_early:
  batch: 100
  seed: 7
"""
CHECKS = """\
checks:
  - id: no_recall_regression
    metric: recall@1
    vs_baseline: no_significant_regression
"""


def files(mode: str, *, stop: str = "") -> dict[str, str]:
    goldens = "".join(
        f'{{"id": "c{i:04d}", "query": "q{i}", "relevant": ["a"]}}\n' for i in range(N_CASES)
    )
    return {
        "evals/evalkit.yaml": EVALKIT_YAML.replace("MODE", mode) + stop,
        "evals/checks.yaml": CHECKS,
        "evals/goldens.jsonl": goldens,
        "evals/stop_early_target.py": TARGET,
    }


def promote(fake: FakeGitHub, tmp_path: Path) -> Job:
    """The default branch's push: promotes the unchanged target's run to the branch store."""
    push = make_job(
        fake, tmp_path / "push", "push", push_payload(fake),
        files=files("same"), mode="promote", baseline_store="branch",
    )  # fmt: skip
    assert push.run(pipeline_gate) == 0, push.log()
    return push


def pr(fake: FakeGitHub, tmp_path: Path, mode: str, *, stop: str = "", **inputs: str) -> Job:
    return make_job(
        fake, tmp_path / "pr", "pull_request", pr_payload(fake),
        files=files(mode, stop=stop), baseline_store="branch", **inputs,
    )  # fmt: skip


def test_a_promotion_runs_every_case_and_says_once_in_the_log_why(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    push = promote(fake_github, tmp_path)
    data = fake_github.git.file_at("evalkit-baselines", f"latest/{CONFIG}.json")
    assert data is not None
    baseline = tmp_path / "baseline.json"
    baseline.write_bytes(data)
    art = read_artifact(baseline)
    assert len(art.result.per_query) == N_CASES  # a row for every case
    assert art.subset is None
    said = [line for line in push.log().splitlines() if "stop_early" in line]
    assert said == [
        "evalkit: stop_early ignored: a promotion runs every case, since a baseline needs a "
        "row for every case (pull requests stop early)"
    ]  # one plain line: no ::warning/::notice annotation
    assert "stop_early" not in push.summary()
    report = json.loads((push.workspace / push.outputs()["report-json"]).read_text())
    assert report["stopped_early"] is None


def test_a_pull_request_stops_early_as_evalkit_gate_does(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    promote(fake_github, tmp_path)
    job = pr(fake_github, tmp_path, "regressed")
    assert job.run(pipeline_gate) == 1, job.log()
    out = job.outputs()
    assert (out["verdict"], out["exit-code"]) == ("fail", "1")
    report = json.loads((job.workspace / out["report-json"]).read_text())
    stopped = report["stopped_early"]
    assert stopped["cases_run"] <= N_CASES // 2  # a clear regression settles early
    assert (stopped["cases_total"], stopped["settled"]) == (N_CASES, True)
    run = stopped["cases_run"]
    (body,) = fake_github.comment_bodies(7)
    assert f"Stopped after {run} of {N_CASES:,} cases: every check settled" in body
    assert "every check settled (anytime-valid)" in body
    assert "Stopped after" in job.summary()
    # The candidate artefact holds the cases run and says it is a part, never a baseline.
    candidate = read_artifact(job.workspace / out["candidate-path"])
    assert len(candidate.result.per_query) == run
    assert candidate.subset == f"stop_early ({run} of {N_CASES:,} cases)"

    # The same config and baseline through `evalkit gate`'s own function: the same stop,
    # the same verdict and exit code.
    baseline = tmp_path / "baseline.json"
    baseline.write_bytes(fake_github.git.file_at("evalkit-baselines", f"latest/{CONFIG}.json"))  # type: ignore[arg-type]
    cli = gate_config(
        load_config(job.workspace / "evals/evalkit.yaml"),
        GateAsk(baseline=baseline, out=tmp_path / "cli-run.json"),
    ).report
    assert json.loads(dumps(cli))["stopped_early"] == stopped
    assert (cli.verdict, int(cli.exit_code)) == ("fail", 1)


def test_a_budget_spent_first_is_incomplete_exit_4_as_in_the_cli(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    """Unchanged, without min_effect, the check can settle only by failing: the budget ends it."""
    promote(fake_github, tmp_path)
    job = pr(fake_github, tmp_path, "same", stop="  max_cases: 200\n")
    assert job.run(pipeline_gate) == 4, job.log()
    out = job.outputs()
    assert (out["verdict"], out["exit-code"]) == ("incomplete", "4")
    (body,) = fake_github.comment_bodies(7)
    assert "200/1,000 cases (stopped early)" in body
    assert "budget max_cases 200 reached before every check settled" in body
    assert "undecided: no_recall_regression" in body


def test_without_a_baseline_a_pull_request_runs_as_evalkit_gate_does(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    """Nothing to compare with: the vs_baseline check cannot settle, so every case runs."""
    job = pr(fake_github, tmp_path, "regressed")  # the branch store was never promoted
    assert job.run(pipeline_gate) == 0, job.log()
    report = json.loads((job.workspace / job.outputs()["report-json"]).read_text())
    assert report["stopped_early"] is None
    candidate = read_artifact(job.workspace / job.outputs()["candidate-path"])
    assert (len(candidate.result.per_query), candidate.subset) == (N_CASES, None)
    cli = gate_config(
        load_config(job.workspace / "evals/evalkit.yaml"), GateAsk(out=tmp_path / "cli.json")
    ).report
    assert (cli.stopped_early, cli.verdict) == (None, report["verdict"])


# -- isolate-target: the batches are answered by the isolated children -----------------------


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux (prctl)")
def test_an_isolated_target_stops_early_too(fake_github: FakeGitHub, folder: Path) -> None:
    promote(fake_github, folder)
    job = pr(fake_github, folder, "regressed", isolate_target="true", comment="false")
    done = run(job)
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads((job.workspace / job.outputs()["report-json"]).read_text())
    assert report["stopped_early"]["cases_run"] <= N_CASES // 2
    assert "(stopped early)" in job.summary()


def test_a_checkpoint_an_earlier_job_left_does_not_refuse_the_next(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    # A self-hosted runner that keeps its workspace: an earlier job's stopped run left a
    # checkpoint with finished cases where this job's run writes its own.
    from evalkit import CaseResult, TargetResponse
    from evalkit._engine.checkpoint import Checkpoint, RunIdentity, checkpoint_path, read_checkpoint

    promote(fake_github, tmp_path)
    job = pr(fake_github, tmp_path, "regressed")
    run_out = job.workspace / ".evalkit" / "action" / f"candidate-{CONFIG}.json"
    stale = checkpoint_path(run_out, job.workspace / "evals")
    with Checkpoint.open(stale, RunIdentity("earlier", "earlier", {}), resume=False) as ckpt:
        answered = TargetResponse(["a"], latency_ms=5.0)
        ckpt.append(CaseResult("c0000", answered, {"recall@1": 1.0}))
    earlier = read_checkpoint(stale)
    assert earlier is not None
    assert earlier.saved == 1
    assert job.run(pipeline_gate) == 1, job.log()
    assert f"evalkit: removed {stale}, an earlier job's checkpoint" in job.log()
    report = json.loads((job.workspace / job.outputs()["report-json"]).read_text())
    assert report["stopped_early"]["cases_run"] <= N_CASES // 2
