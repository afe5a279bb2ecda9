"""run_action end to end (in-process) against the fake GitHub, with an injected gate.

The gate is a stand-in here on purpose: these tests are about the GitHub side (which
baseline reaches the gate, what is written where, what the exit code is). The real gate
is exercised through the installed entrypoint by the end-to-end test.
"""

from __future__ import annotations

import html
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from actions_job import BASE_SHA, CHECKS, HEAD_SHA, make_job, pr_payload, push_payload
from fake_github import (  # noqa: F401  (the *_fixture names register fixtures)
    FakeGitHub,
    fake_ghes_fixture,
    fake_github_fixture,
    github_factory_for_tests,
    make_zip,
)

from evalkit.action.contract import FailingCheck, GateOutcome, GateRequest
from evalkit.action.gate_mode import failing_check_annotations, find_check_line
from evalkit.action.inputs import ActionInputs, resolve_settings
from evalkit.action.run import post_comment_from_dir, run_action
from evalkit.action.session import host_gateway
from evalkit.errors import ConfigError
from evalkit.github.client import NO_DELAY
from evalkit.github.comment import marker_for

ROOT = Path(__file__).resolve().parents[2]
ARTEFACT = json.dumps({"schema_version": 1, "rows": [], "from": "main"}).encode()


@dataclass
class StubGate:
    """Records what it was asked and answers as told."""

    exit_code: int = 0
    verdict: str = "pass"
    failing: list[FailingCheck] = field(default_factory=list)
    raises: Exception | None = None
    requests: list[GateRequest] = field(default_factory=list)

    def __call__(self, request: GateRequest) -> GateOutcome:
        self.requests.append(request)
        if self.raises is not None:
            raise self.raises
        candidate = request.output_dir / "candidate.json"
        candidate.write_text(json.dumps({"schema_version": 1, "rows": [], "from": "candidate"}))
        report_json = request.output_dir / "report.json"
        report_json.write_text("{}")
        markdown = (
            f"{marker_for(request.config_name)}\n### evalkit: {self.verdict}\n"
            f"baseline: {request.baseline_status}\n"
        )
        return GateOutcome(
            exit_code=self.exit_code,
            verdict=self.verdict,
            blocking_failures=len(self.failing),
            markdown=markdown,
            failing_checks=self.failing,
            candidate_path=candidate,
            report_paths={"json": report_json},
            checks_path=request.config.path.parent / "checks.yaml",
        )


def seed_baseline(fake: FakeGitHub, config_name: str = "evals-evalkit") -> int:
    return fake.add_artifact(make_zip({f"{config_name}.json": ARTEFACT}), head_sha=BASE_SHA)


# -- gate mode on a pull request ------------------------------------------------------------


def test_action_pr_gate_creates_then_updates_one_comment(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    seed_baseline(fake_github)
    job = make_job(fake_github, tmp_path, "pull_request", pr_payload(fake_github))
    gate = StubGate()
    assert job.run(gate) == 0
    request = gate.requests[0]
    assert request.config_name == "evals-evalkit"
    assert request.details_url == "https://github.example/octo/widgets/actions/runs/31337"
    assert request.baseline_status == "found"
    assert request.baseline_path is not None
    assert request.baseline_path.read_bytes() == ARTEFACT
    out = job.outputs()
    assert out["verdict"] == "pass"
    assert out["exit-code"] == "0"
    assert out["comment"] == "created"
    assert out["baseline-status"] == "found"
    assert out["baseline-source"] == "artifact"
    assert out["baseline-sha"] == BASE_SHA
    assert out["report-json"] == ".evalkit/action/report.json"
    assert out["report-markdown"] == ".evalkit/action/comment.md"
    assert "### evalkit: pass" in job.summary()

    gate.verdict, gate.exit_code = "fail", 1
    assert job.run(gate) == 1
    assert job.outputs()["comment"] == "updated"  # the last heredoc block wins
    (body,) = fake_github.comment_bodies(7)
    assert body.startswith(marker_for("evals-evalkit"))
    assert "### evalkit: fail" in body


def test_action_fork_pr_skips_comment_but_writes_everything_else(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    seed_baseline(fake_github)
    job = make_job(fake_github, tmp_path, "pull_request", pr_payload(fake_github, fork=True))
    gate = StubGate(verdict="fail", exit_code=1)
    assert job.run(gate) == 1
    assert fake_github.api_calls("POST") == []
    assert fake_github.api_calls("PATCH") == []
    assert fake_github.api_calls("GET", "/comments") == []
    out = job.outputs()
    assert out["comment"] == "skipped-fork"
    assert out["verdict"] == "fail"
    assert "comes from a fork" in job.log()
    bundle = job.workspace / ".evalkit/action"
    meta = json.loads((bundle / "comment.json").read_text())
    assert meta == {
        "config_name": "evals-evalkit",
        "pr_number": 7,
        "head_sha": HEAD_SHA,
        "repository": fake_github.full_name,
    }
    assert (bundle / "comment.md").read_text().startswith(marker_for("evals-evalkit"))
    assert "### evalkit: fail" in job.summary()


def test_action_comment_403_warns_and_keeps_verdict_exit_code(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    seed_baseline(fake_github)
    fake_github.fail("POST", r"/comments$", 403, message="Resource not accessible by integration")
    job = make_job(fake_github, tmp_path, "pull_request", pr_payload(fake_github))
    assert job.run(StubGate(verdict="fail", exit_code=1)) == 1
    assert job.outputs()["comment"] == "forbidden"
    assert "::warning title=evalkit%3A no PR comment::could not comment on PR #7" in job.log()
    assert "grant 'pull-requests: write'" in job.log()


def test_action_comment_5xx_retries_then_warns_and_passes(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    seed_baseline(fake_github)
    fake_github.fail("POST", r"/comments$", 502, times=10)
    job = make_job(fake_github, tmp_path, "pull_request", pr_payload(fake_github))
    assert job.run(StubGate()) == 0
    assert len(fake_github.api_calls("POST", "/comments")) == 3
    assert job.outputs()["comment"] == "failed"
    assert "gave up after 3 attempts" in job.log()


def test_action_baseline_fetch_5xx_is_exit_3_and_gate_not_run(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    fake_github.fail("GET", r"/actions/artifacts$", 503, times=10)
    job = make_job(fake_github, tmp_path, "pull_request", pr_payload(fake_github))
    gate = StubGate()
    assert job.run(gate) == 3
    assert gate.requests == []
    out = job.outputs()
    assert out["verdict"] == "error"
    assert out["exit-code"] == "3"
    assert "could not fetch the baseline from GitHub" in job.summary()
    assert "::error title=evalkit%3A baseline unavailable::" in job.log()


def test_action_baseline_403_hints_actions_read(fake_github: FakeGitHub, tmp_path: Path) -> None:
    fake_github.fail("GET", r"/actions/artifacts$", 403, message="Resource not accessible")
    job = make_job(fake_github, tmp_path, "pull_request", pr_payload(fake_github))
    assert job.run(StubGate()) == 3
    assert "grant the job 'actions: read'" in job.log()


def test_action_expired_baseline_reaches_gate_as_no_baseline(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    fake_github.add_artifact(
        make_zip({"evals-evalkit.json": ARTEFACT}), expired=True, expires_at="2024-04-01T00:00:00Z"
    )
    job = make_job(
        fake_github, tmp_path, "pull_request", pr_payload(fake_github), require_baseline="true"
    )
    gate = StubGate(verdict="no-baseline", exit_code=1)
    assert job.run(gate) == 1
    request = gate.requests[0]
    assert (request.baseline_path, request.baseline_status) == (None, "expired")
    assert request.config.model.require_baseline is True
    assert "::warning title=evalkit%3A no baseline::no baseline (expired)" in job.log()
    assert "blocking" in job.log()
    assert job.outputs()["baseline-status"] == "expired"


def test_action_spoofed_fork_artifact_never_reaches_gate(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    fake_github.add_artifact(
        make_zip({"evals-evalkit.json": b'{"schema_version": 1}'}),
        head_sha=BASE_SHA,
        head_repository_id=9999,
    )
    job = make_job(fake_github, tmp_path, "pull_request", pr_payload(fake_github))
    gate = StubGate()
    job.run(gate)
    assert gate.requests[0].baseline_status == "missing"
    assert "1 uploaded by a run of another repository (fork)" in gate.requests[0].baseline_detail
    assert fake_github.blob_requests == []


def test_action_failing_checks_become_annotations_on_checks_file(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    seed_baseline(fake_github)
    job = make_job(fake_github, tmp_path, "pull_request", pr_payload(fake_github), comment="false")
    failing = [FailingCheck("no_ndcg_regression", "ndcg@10 fell by 0.04, 95% CI [-0.06, -0.02]")]
    assert job.run(StubGate(verdict="fail", exit_code=1, failing=failing)) == 1
    assert (
        "::error file=evals/checks.yaml,line=7,title=evalkit check no_ndcg_regression failed::"
        "no_ndcg_regression: ndcg@10 fell by 0.04, 95%25 CI [-0.06, -0.02]"
    ) in job.log()
    assert job.outputs()["comment"] == "off"
    assert fake_github.api_calls("GET", "/comments") == []


def test_action_annotations_capped_at_ten(tmp_path: Path) -> None:
    checks = tmp_path / "checks.yaml"
    checks.write_text("".join(f"  - id: c{i}\n" for i in range(15)))
    failing = [FailingCheck(f"c{i}", "failed") for i in range(15)]
    annotations = failing_check_annotations(failing, checks, tmp_path)
    assert len(annotations) == 10
    assert [a.line for a in annotations[:9]] == list(range(1, 10))
    assert annotations[-1].message == "6 more failing check(s): c9, c10, c11, c12, c13, c14"


def test_action_find_check_line_handles_quotes_and_comments(tmp_path: Path) -> None:
    checks = tmp_path / "checks.yaml"
    checks.write_text(CHECKS)
    assert find_check_line(checks, "recall_floor") == 2
    assert find_check_line(checks, "no_ndcg_regression") == 7
    assert find_check_line(checks, "recall") is None
    assert find_check_line(tmp_path / "missing.yaml", "x") is None


def test_action_masks_token_and_never_prints_it_raw(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    seed_baseline(fake_github)
    job = make_job(fake_github, tmp_path, "pull_request", pr_payload(fake_github))
    job.env["INPUT_JUDGE-API-KEY"] = "sk-secret-value"
    job.run(StubGate())
    lines = job.log().splitlines()
    assert lines[0] == f"::add-mask::{fake_github.token}"
    assert "::add-mask::sk-secret-value" in lines
    assert all(fake_github.token not in line for line in lines[1:] if "add-mask" not in line)


def test_action_pull_request_target_is_warned_about(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    seed_baseline(fake_github)
    job = make_job(fake_github, tmp_path, "pull_request_target", pr_payload(fake_github))
    job.run(StubGate())
    assert "evalkit: unsafe trigger" in job.log().replace("%3A", ":")


@pytest.mark.parametrize(
    ("raised", "exit_code", "said"),
    [
        (
            ConfigError("evals/evalkit.yaml: unknown key 'treshold' at checks[0]"),
            2,
            "unknown key 'treshold' at checks[0]",
        ),
        (  # a bug (ours or a plugin's) still leaves outputs and a readable error behind
            ZeroDivisionError("a plugin divided by zero"),
            3,
            "internal error: ZeroDivisionError: a plugin divided by zero",
        ),
        (  # untrusted text in an error: shown, but pings nobody and renders no markup
            ConfigError("case '@octocat **x** [y](http://e.example) #12': bad"),
            2,
            "case '@\u2060octocat **x** [y](http://e.example) #\u206012': bad",
        ),
    ],
)
def test_action_gate_error_is_its_exit_code_with_summary_and_comment(
    fake_github: FakeGitHub, tmp_path: Path, raised: Exception, exit_code: int, said: str
) -> None:
    seed_baseline(fake_github)
    job = make_job(fake_github, tmp_path, "pull_request", pr_payload(fake_github))
    assert job.run(StubGate(raises=raised)) == exit_code
    assert job.outputs()["verdict"] == "error"
    # what a reader sees: the text as rendered (character references resolved), and no
    # markup of its own in the raw markdown
    assert said in html.unescape(job.summary())
    # The sticky comment shows the error, so no earlier PASS stays on the PR.
    (body,) = fake_github.comment_bodies(7)
    assert body.startswith(marker_for("evals-evalkit"))
    assert f"### evalkit: error (exit {exit_code})" in body
    assert said in html.unescape(body)
    for raw in (job.summary(), body):
        assert "@octocat" not in raw
        assert "**x**" not in raw
        assert "[y](" not in raw


@pytest.mark.parametrize(
    ("breakage", "exit_code", "words"),
    [
        ("gate", 2, "unknown key"),
        ("fetch-5xx", 3, "could not fetch the baseline"),
        ("unusable", 2, "not valid JSON"),
        ("crash", 3, "internal error"),
    ],
)
def test_action_error_state_replaces_an_earlier_pass_comment(
    fake_github: FakeGitHub, tmp_path: Path, breakage: str, exit_code: int, words: str
) -> None:
    seed_baseline(fake_github)
    job = make_job(fake_github, tmp_path, "pull_request", pr_payload(fake_github))
    assert job.run(StubGate()) == 0
    (before,) = fake_github.comment_bodies(7)
    assert "### evalkit: pass" in before
    gate = StubGate()
    if breakage == "gate":
        gate = StubGate(raises=ConfigError("checks.yaml: unknown key 'treshold'"))
    elif breakage == "crash":
        gate = StubGate(raises=RuntimeError("boom"))
    elif breakage == "fetch-5xx":
        fake_github.fail("GET", r"/actions/artifacts$", 502, times=5)
    else:
        fake_github.artifacts.clear()
        fake_github.add_artifact(make_zip({"evals-evalkit.json": b"{not json"}), head_sha=BASE_SHA)
    assert job.run(gate) == exit_code
    out = job.outputs()
    assert (out["verdict"], out["exit-code"], out["comment"]) == (
        "error",
        str(exit_code),
        "updated",
    )
    (after,) = fake_github.comment_bodies(7)
    assert f"### evalkit: error (exit {exit_code})" in after
    assert words in after
    assert "### evalkit: pass" not in after


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("mode", "deploy", "input mode: expected one of gate, promote, comment, pin, got 'deploy'"),
        ("comment", "maybe", "input comment: expected true or false, got 'maybe'"),
        ("baseline-store", "s3", "input baseline-store: expected one of"),
        ("config-name", "../etc", "config name '../etc'"),
        ("require-baseline", "sometimes", "input require-baseline: expected true or false"),
        ("require-reference", "often", "input require-reference: expected true or false"),
    ],
)
def test_action_bad_input_is_one_line_exit_2(
    fake_github: FakeGitHub, tmp_path: Path, name: str, value: str, message: str
) -> None:
    job = make_job(fake_github, tmp_path, "pull_request", pr_payload(fake_github))
    job.env[f"INPUT_{name.upper()}"] = value
    gate = StubGate()
    assert job.run(gate) == 2
    errors = [line for line in job.log().splitlines() if line.startswith("::error")]
    assert len(errors) == 1
    assert message in errors[0].replace("%3A", ":")
    assert gate.requests == []
    assert fake_github.requests == []


def test_action_outside_actions_is_exit_2(tmp_path: Path) -> None:
    stdout = io.StringIO()
    code = run_action({"INPUT_CONFIG": "x.yaml"}, StubGate(), stdout=stdout, retry=NO_DELAY)
    assert code == 2
    assert "GITHUB_REPOSITORY is not set" in stdout.getvalue()


def test_action_works_against_ghes(fake_ghes: FakeGitHub, tmp_path: Path) -> None:
    seed_baseline(fake_ghes)
    job = make_job(fake_ghes, tmp_path, "pull_request", pr_payload(fake_ghes))
    assert job.run(StubGate()) == 0
    assert job.outputs()["comment"] == "created"
    assert all(r.path.startswith("/api/v3/") for r in fake_ghes.requests)


# -- promote mode ---------------------------------------------------------------------------


def test_action_promote_artifact_store_writes_upload_path(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    job = make_job(fake_github, tmp_path, "push", push_payload(fake_github), mode="promote")
    gate = StubGate()
    assert job.run(gate) == 0
    assert gate.requests[0].baseline_path is None
    out = job.outputs()
    assert out["baseline-path"] == ".evalkit/action/baseline"
    promoted = job.workspace / ".evalkit/action/baseline/evals-evalkit.json"
    assert json.loads(promoted.read_text())["from"] == "candidate"
    assert out["promoted-path"] == ".evalkit/action/baseline/evals-evalkit.json"
    assert fake_github.api_calls("POST") == []


def test_action_promote_branch_store_commits_and_pr_reads_it(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    push = make_job(
        fake_github,
        tmp_path / "push",
        "push",
        push_payload(fake_github),
        mode="promote",
        baseline_store="branch",
    )
    assert push.run(StubGate()) == 0
    assert push.outputs()["promoted-path"] == "evalkit-baselines:latest/evals-evalkit.json"
    assert fake_github.git.file_at("evalkit-baselines", f"{'d' * 40}/evals-evalkit.json")

    pr = make_job(
        fake_github,
        tmp_path / "pr",
        "pull_request",
        pr_payload(fake_github),
        baseline_store="branch",
    )
    gate = StubGate()
    assert pr.run(gate) == 0
    assert gate.requests[0].baseline_status == "found"
    assert json.loads(gate.requests[0].baseline_path.read_text())["from"] == "candidate"  # type: ignore[union-attr]
    assert pr.outputs()["baseline-sha"] == "d" * 40


def test_action_promote_refuses_outside_default_branch_push(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    job = make_job(fake_github, tmp_path, "pull_request", pr_payload(fake_github), mode="promote")
    gate = StubGate()
    assert job.run(gate) == 2
    assert gate.requests == []
    assert "mode: promote runs only on a push to main" in job.log().replace("%3A", ":")


def test_action_promote_skipped_when_gate_errors(fake_github: FakeGitHub, tmp_path: Path) -> None:
    job = make_job(fake_github, tmp_path, "push", push_payload(fake_github), mode="promote")
    assert job.run(StubGate(exit_code=3, verdict="error")) == 3
    assert not (job.workspace / ".evalkit/action/baseline").exists()


def test_action_file_store_round_trip(fake_github: FakeGitHub, tmp_path: Path) -> None:
    promote = make_job(
        fake_github,
        tmp_path,
        "push",
        push_payload(fake_github),
        mode="promote",
        baseline_store="file",
        baseline_path="baselines/main.json",
    )
    assert promote.run(StubGate()) == 0
    gate = StubGate()
    check = make_job(
        fake_github,
        tmp_path,
        "pull_request",
        pr_payload(fake_github),
        baseline_store="file",
        baseline_path="baselines/main.json",
        comment="false",
    )
    assert check.run(gate) == 0
    assert gate.requests[0].baseline_status == "found"
    assert fake_github.requests == []  # the file store needs no GitHub at all


# -- the workflow_run companion ---------------------------------------------------------------


def companion_env(fake: FakeGitHub, tmp_path: Path, *, head_sha: str) -> dict[str, str]:
    payload = {
        "workflow_run": {
            "id": 99,
            "event": "pull_request",
            "head_sha": head_sha,
            "head_branch": "feature",
            "head_repository": {"full_name": "mallory/widgets"},
        },
        "repository": push_payload(fake)["repository"],
    }
    job = make_job(fake, tmp_path / "companion", "workflow_run", payload)
    return job.env


def fork_bundle(fake: FakeGitHub, tmp_path: Path) -> Path:
    job = make_job(
        fake, tmp_path / "fork", "pull_request", pr_payload(fake, fork=True), baseline_store="none"
    )
    job.run(StubGate(verdict="fail", exit_code=1))
    bundle = job.workspace / ".evalkit/action"
    body = bundle / "comment.md"
    body.write_text(body.read_text() + "\ncc @octo-org/admins\n" + marker_for("other"))
    return bundle


def test_action_companion_posts_fork_comment_after_sha_check(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    bundle = fork_bundle(fake_github, tmp_path)
    fake_github.add_pull(7, head_sha=HEAD_SHA)
    stdout = io.StringIO()
    code = post_comment_from_dir(
        bundle,
        companion_env(fake_github, tmp_path, head_sha=HEAD_SHA),
        github_factory=github_factory_for_tests,
        stdout=stdout,
        retry=NO_DELAY,
    )
    assert code == 0, stdout.getvalue()
    (body,) = fake_github.comment_bodies(7)
    assert body.startswith(marker_for("evals-evalkit"))
    assert "### evalkit: fail" in body
    assert "@octo-org" not in body
    assert marker_for("other") not in body


def test_action_companion_refuses_report_for_another_commit(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    bundle = fork_bundle(fake_github, tmp_path)
    fake_github.add_pull(7, head_sha="f" * 40)  # the PR moved on (or the report lies)
    stdout = io.StringIO()
    code = post_comment_from_dir(
        bundle,
        companion_env(fake_github, tmp_path, head_sha=HEAD_SHA),
        github_factory=github_factory_for_tests,
        stdout=stdout,
        retry=NO_DELAY,
    )
    assert code == 0
    assert fake_github.comment_bodies(7) == []
    assert "evalkit%3A comment refused" in stdout.getvalue()
    assert "ffffffffffff" in stdout.getvalue()


def test_action_companion_missing_bundle_is_exit_2(fake_github: FakeGitHub, tmp_path: Path) -> None:
    stdout = io.StringIO()
    code = post_comment_from_dir(
        tmp_path / "nothing",
        companion_env(fake_github, tmp_path, head_sha=HEAD_SHA),
        github_factory=github_factory_for_tests,
        stdout=stdout,
        retry=NO_DELAY,
    )
    assert code == 2
    assert "comment.json: missing" in stdout.getvalue()


# -- action.yml agrees with the code ----------------------------------------------------------


def action_yml() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "action.yml").read_text())
    return loaded


def test_action_yml_declares_every_input_the_code_reads() -> None:
    source = (ROOT / "src/evalkit/action/inputs.py").read_text()
    read = set(re.findall(r'_(?:input|bool_input|choice)\(env, "([a-z-]+)"', source))
    read.add("github-token")
    assert read <= set(action_yml()["inputs"]), read - set(action_yml()["inputs"])


def test_action_yml_declares_every_output_the_action_writes(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    seed_baseline(fake_github)
    written: set[str] = set()
    job = make_job(fake_github, tmp_path / "a", "pull_request", pr_payload(fake_github))
    job.run(StubGate())
    written |= set(job.outputs())
    job = make_job(fake_github, tmp_path / "b", "push", push_payload(fake_github), mode="promote")
    job.run(StubGate())
    written |= set(job.outputs())
    declared = set(action_yml()["outputs"])
    assert written <= declared, written - declared


def test_action_yml_runs_the_container_entrypoint() -> None:
    runs = action_yml()["runs"]
    assert runs == {"using": "docker", "image": "Dockerfile", "args": ["action"]}
    assert action_yml()["inputs"]["github-token"]["default"] == "${{ github.token }}"


def test_action_config_error_names_bad_config_name() -> None:
    with pytest.raises(ConfigError, match="'a/b'"):
        marker_for("a/b")


def test_action_host_gateway_read_from_route_table(tmp_path: Path) -> None:
    table = tmp_path / "route"
    table.write_text(
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\n"
        "eth0\t0011AC00\t00000000\t0001\t0\t0\t0\t0000FFFF\n"
        "eth0\t00000000\t010011AC\t0003\t0\t0\t0\t00000000\n"
    )
    assert host_gateway(table) == "172.17.0.1"
    table.write_text("Iface\tDestination\tGateway\n")
    assert host_gateway(table) is None
    assert host_gateway(tmp_path / "absent") is None


# -- settings: inputs > evalkit.yaml > defaults -------------------------------------------


MINIMAL = "goldens: g.jsonl\nchecks: c.yaml\nmetrics: [recall@10]\ntarget: {python: 'm:f'}\n"


def settings_for(tmp_path: Path, config_text: str, **inputs: str) -> Any:
    (tmp_path / "evals").mkdir(exist_ok=True)
    (tmp_path / "evals" / "search.yaml").write_text(MINIMAL + config_text)
    env = {"INPUT_CONFIG": "evals/search.yaml"}
    env |= {f"INPUT_{k.upper().replace('_', '-')}": v for k, v in inputs.items()}
    return resolve_settings(ActionInputs.from_env(env), tmp_path)


def test_action_settings_default_to_file_stem_and_artifact(tmp_path: Path) -> None:
    s = settings_for(tmp_path, "")
    store = s.config.baseline
    assert (s.config_name, store.kind, s.artifact_name) == (
        "search",
        "artifact",
        "evalkit-baseline",
    )
    assert (store.branch, s.require_baseline, store.path) == ("evalkit-baselines", False, None)
    assert s.output_dir == tmp_path / ".evalkit/action"


def test_action_settings_read_evalkit_yaml_baseline_section(tmp_path: Path) -> None:
    config = (
        "name: recipes\nrequire_baseline: true\n"
        "baseline:\n  store: file\n  path: ../baselines/recipes.json\n"
    )
    s = settings_for(tmp_path, config)
    path = s.config.baseline.path
    assert (s.config_name, s.config.baseline.kind, s.require_baseline) == ("recipes", "file", True)
    assert path is not None
    assert s.config.resolve(path) == tmp_path / "evals" / "../baselines/recipes.json"


def test_action_require_reference_input_and_evalkit_yaml_like_require_baseline(
    tmp_path: Path,
) -> None:
    assert settings_for(tmp_path, "").require_reference is False
    assert settings_for(tmp_path, "require_reference: true\n").require_reference is True
    on = settings_for(tmp_path, "", require_reference="true")
    assert on.require_reference is True
    # an explicit false switches the file's true off (input > evalkit.yaml)
    off = settings_for(tmp_path, "require_reference: true\n", require_reference="false")
    assert off.require_reference is False
    assert off.config.model.require_reference is False


def test_action_settings_inputs_override_evalkit_yaml(tmp_path: Path) -> None:
    config = "name: recipes\nbaseline:\n  store: branch\n  branch: bl\n"
    s = settings_for(
        tmp_path,
        config,
        baseline_store="artifact",
        config_name="other",
        require_baseline="false",
        baseline_name="nightly",
    )
    assert (s.config_name, s.config.baseline.kind, s.artifact_name) == (
        "other",
        "artifact",
        "nightly",
    )
    assert s.config.baseline.branch == "bl"  # not overridden, so the config's
    # The merged config is the one the gate runs: the candidate is recorded as "other".
    assert s.config.name == "other"


def test_action_settings_file_store_without_path_names_both_places(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"baseline-path input or baseline.path in search.yaml"):
        settings_for(tmp_path, "", baseline_store="file")


def test_action_settings_bad_store_in_config_names_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"search.yaml:\d+: baseline.store: .*'artifact'"):
        settings_for(tmp_path, "baseline:\n  store: s3\n")


def test_action_missing_config_is_exit_2(fake_github: FakeGitHub, tmp_path: Path) -> None:
    job = make_job(
        fake_github, tmp_path, "pull_request", pr_payload(fake_github), config="nope/evalkit.yaml"
    )
    gate = StubGate()
    assert job.run(gate) == 2
    assert "nope/evalkit.yaml: config file not found" in job.log()
    assert gate.requests == []
