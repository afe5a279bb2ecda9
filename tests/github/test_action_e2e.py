"""The Action end to end, as its container runs it.

Once per session the wheel is built from this tree and installed into a clean venv
with exactly the locked runtime dependencies (what the Dockerfile does). Each test then
runs the installed ``evalkit action`` (or ``evalkit comment --from``) as a subprocess,
with the environment the runner gives a Docker action: a real event payload, ``INPUT_*``
variables with hyphens kept, ``GITHUB_OUTPUT``/``GITHUB_STEP_SUMMARY`` files,
``GITHUB_API_URL`` at the fake GitHub, and ``GITHUB_WORKSPACE`` a copy of the
recipe-search example laid out as a repository. The real gate runs: the candidate
(ranker v2) passes against the committed v1 baseline, the regressed build (v3) fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from actions_job import BASE_SHA, HEAD_SHA, Job, make_job, pr_payload, push_payload
from fake_github import (  # noqa: F401  (the *_fixture name registers the fixture)
    FakeGitHub,
    fake_github_fixture,
    make_zip,
)

from evalkit._spec.artifact import read_artifact
from evalkit.github.comment import marker_for

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "custom_client"
EXAMPLE_IN_REPO = "examples/custom_client"  # where the example sits in the workspace
GOOD = f"{EXAMPLE_IN_REPO}/evalkit.yaml"  # ranker v2: passes against the v1 baseline
REGRESSED = f"{EXAMPLE_IN_REPO}/evalkit-regressed.yaml"  # ranker v3: blocking failures
CHECKS_FILE = f"{EXAMPLE_IN_REPO}/checks.yaml"
CONFIG_NAME = "recipes"  # `name:` of all three example configs: one sticky comment
REPORT_DIR = ".evalkit/action"
PUSH_SHA = "d" * 40  # GITHUB_SHA in every simulated job
OLD_SHA = "e" * 40
# The example's committed ranker-v1 run: the baseline a default-branch push promoted.
BASELINE_V1 = (EXAMPLE / "baseline.json").read_bytes()
TIMEOUT_S = 120


# -- the installed package -------------------------------------------------------------------


@dataclass(frozen=True)
class Installed:
    """A clean venv holding the built wheel and its locked runtime dependencies."""

    venv: Path
    wheel: Path
    timings: Mapping[str, float]

    @property
    def bin_dir(self) -> Path:
        return self.venv / "bin"

    @property
    def evalkit(self) -> Path:
        return self.bin_dir / "evalkit"


def _uv(*args: str, cwd: Path, env: Mapping[str, str]) -> None:
    """Run uv offline (the cache has every locked wheel after `uv sync`); online if not."""
    uv = shutil.which("uv")
    if uv is None:
        pytest.fail("uv is not on PATH: the end-to-end action tests build the wheel with uv")
    offline = subprocess.run(
        [uv, *args, "--offline"], cwd=cwd, env=dict(env), capture_output=True, text=True
    )
    if offline.returncode == 0:
        return
    online = subprocess.run([uv, *args], cwd=cwd, env=dict(env), capture_output=True, text=True)
    if online.returncode != 0:
        pytest.fail(f"uv {' '.join(args)} failed:\n{online.stderr[-2000:]}")


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """Build the wheel once per session and install it as the Dockerfile would."""
    root = tmp_path_factory.mktemp("evalkit-e2e")
    dist, venv = root / "dist", root / "venv"
    uv_env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    timings: dict[str, float] = {}

    start = time.perf_counter()
    _uv("build", "--wheel", "--out-dir", str(dist), cwd=REPO, env=uv_env)
    timings["build wheel"] = time.perf_counter() - start
    (wheel,) = dist.glob("paired_evalkit-*.whl")

    start = time.perf_counter()
    # The interpreter running the tests, without pip (uv installs): a bare, clean venv.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    # Exactly the locked runtime dependencies (the Dockerfile's first `uv sync`), then the
    # wheel itself without letting the resolver pick other versions.
    _uv(
        "sync",
        "--locked",
        "--no-dev",
        "--no-install-project",
        "--python",
        python,
        cwd=REPO,
        env={**uv_env, "UV_PROJECT_ENVIRONMENT": str(venv)},
    )
    _uv("pip", "install", "--no-deps", "--python", python, str(wheel), cwd=root, env=uv_env)
    # The wheel's declared requirements are met by the locked set.
    _uv("pip", "check", "--python", python, cwd=root, env=uv_env)
    timings["venv + install"] = time.perf_counter() - start
    return Installed(venv=venv, wheel=wheel, timings=timings)


# -- one simulated job, run through the installed entrypoint -------------------------------


@dataclass
class Step:
    """What one run of the installed entrypoint left behind."""

    job: Job
    returncode: int
    stdout: str
    stderr: str
    outputs: dict[str, str] = field(default_factory=dict)
    summary: str = ""

    def path(self, output: str) -> Path:
        """An output that names a file, resolved against the workspace."""
        return self.job.workspace / self.outputs[output]

    @property
    def log(self) -> str:
        """The step log with the escaped ':' of workflow-command properties restored."""
        return self.stdout.replace("%3A", ":")


def example_files() -> dict[str, str]:
    """The recipe-search example as it sits in this repository (same relative paths)."""
    return {
        f"{EXAMPLE_IN_REPO}/{p.name}": p.read_text(encoding="utf-8")
        for p in sorted(EXAMPLE.iterdir())
        if p.is_file() and p.suffix in (".yaml", ".jsonl", ".py", ".json")
    }


def job_for(
    fake: FakeGitHub, tmp: Path, event: str, payload: Mapping[str, object], **inputs: str
) -> Job:
    inputs.setdefault("config", GOOD)
    return make_job(fake, tmp, event, dict(payload), files=example_files(), **inputs)


def run_step(installed: Installed, job: Job, *args: str, cwd: Path | None = None) -> Step:
    """Run ``evalkit <args>`` from the venv as the runner runs a Docker action's entrypoint."""
    env = {
        # Only what the container would have: no inherited PYTHONPATH/VIRTUAL_ENV/proxies.
        # (Bytecode writing stays on, unlike the image: the venv is not precompiled, and
        # compiling on first import once is cheaper than precompiling everything.)
        "PATH": f"{installed.bin_dir}{os.pathsep}/usr/local/bin:/usr/bin:/bin",
        "HOME": str(job.tmp / "home"),
        "LANG": "C.UTF-8",
        "PYTHONUNBUFFERED": "1",
        **job.env,
    }
    proc = subprocess.run(
        [str(installed.evalkit), *(args or ("action",))],
        env=env,
        cwd=cwd or job.workspace,  # the runner's --workdir /github/workspace
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    return Step(job, proc.returncode, proc.stdout, proc.stderr, job.outputs(), job.summary())


def seed_baseline(
    fake: FakeGitHub,
    *,
    head_sha: str = BASE_SHA,
    data: bytes = BASELINE_V1,
    head_repository_id: int | None = None,
    created_at: str = "2024-05-01T00:00:00Z",
    expired: bool = False,
    expires_at: str = "2999-01-01T00:00:00Z",
) -> int:
    """A baseline artifact as actions/upload-artifact stores the promote job's folder."""
    return fake.add_artifact(
        make_zip({f"{CONFIG_NAME}.json": data}),
        head_sha=head_sha,
        head_repository_id=head_repository_id,
        created_at=created_at,
        expired=expired,
        expires_at=expires_at,
    )


def assert_ok_step(step: Step) -> None:
    """Exit code and outputs agree; nothing crashed; the token never reached the log."""
    assert "Traceback" not in step.stderr + step.stdout, step.stderr
    assert step.outputs["exit-code"] == str(step.returncode), step.stdout
    lines = step.stdout.splitlines()
    token = step.job.fake.token
    assert lines
    assert lines[0] == f"::add-mask::{token}"
    assert all(token not in line for line in lines[1:]), "the token was printed unmasked"


def blob_requests_carry_no_token(fake: FakeGitHub) -> None:
    """The API's download call was authorised; the redirected blob fetch carried no token."""
    downloads = [r for r in fake.requests if r.path.endswith("/zip")]
    assert downloads, "no artifact download was requested from the API"
    assert all(r.headers.get("Authorization") == f"Bearer {fake.token}" for r in downloads)
    assert all(r.status == 302 for r in downloads)
    assert fake.blob_requests, "no archive was downloaded from the blob host"
    for request in fake.blob_requests:
        assert not {k.lower() for k in request.headers} & {"authorization", "cookie"}, (
            request.headers
        )
        assert fake.token not in json.dumps(request.headers)


def id_line(check_id: str) -> int:
    """The line of ``- id: <check_id>`` in the example's checks file (1-based)."""
    lines = (EXAMPLE / "checks.yaml").read_text().splitlines()
    (number,) = [n for n, text in enumerate(lines, 1) if text.strip() == f"- id: {check_id}"]
    return number


# -- tests ---------------------------------------------------------------------------------


def test_action_e2e_installed_wheel_is_what_runs(installed: Installed) -> None:
    proc = subprocess.run(
        [str(installed.venv / "bin" / "python"), "-c", "import evalkit; print(evalkit.__file__)"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
        cwd=installed.venv,
        check=True,
    )
    module = Path(proc.stdout.strip())
    assert module.is_relative_to(installed.venv), module  # not this source tree
    help_text = subprocess.run(
        [str(installed.evalkit), "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "action" in help_text
    assert "comment" in help_text
    # Shown with `pytest -s`: what the session fixture spent (not asserted: not a benchmark).
    print(", ".join(f"{what} {seconds:.2f} s" for what, seconds in installed.timings.items()))


def test_action_e2e_pr_creates_comment_then_updates_the_same_one(
    installed: Installed, fake_github: FakeGitHub, tmp_path: Path
) -> None:
    seed_baseline(fake_github, head_sha=OLD_SHA, created_at="2024-04-01T00:00:00Z")
    base_artifact = seed_baseline(fake_github)  # built from the PR's base commit: preferred
    # A busy PR: the sticky comment will sit on the third page, after a reviewer who quoted
    # the marker (a person's comment, which must never be overwritten).
    fake_github.max_per_page = 2
    quoted = fake_github.add_comment(7, f"> {marker_for(CONFIG_NAME)}\nwhy did this fail?")
    for n in range(3):
        fake_github.add_comment(7, f"review note {n}")

    first = run_step(
        installed, job_for(fake_github, tmp_path / "run1", "pull_request", pr_payload(fake_github))
    )
    assert_ok_step(first)
    assert first.returncode == 0, first.stdout + first.stderr
    out = first.outputs
    assert (out["verdict"], out["blocking-failures"], out["comment"]) == ("pass", "0", "created")
    assert (out["baseline-status"], out["baseline-source"]) == ("found", "artifact")
    assert out["baseline-sha"] == BASE_SHA
    assert out["config-name"] == CONFIG_NAME
    assert out["report-dir"] == REPORT_DIR
    assert out["report-markdown"] == f"{REPORT_DIR}/report-{CONFIG_NAME}.md"
    assert out["report-json"] == f"{REPORT_DIR}/report-{CONFIG_NAME}.json"
    assert json.loads(first.path("report-json").read_text())["verdict"] == "pass"
    assert read_artifact(first.path("candidate-path")).config_name == CONFIG_NAME
    *humans, comment = fake_github.comments[7]
    assert humans[0] is quoted
    first_body = str(comment["body"])
    assert first_body.startswith(marker_for(CONFIG_NAME))
    assert first_body == (first.job.workspace / REPORT_DIR / "comment.md").read_text()
    assert "PASS" in first_body
    assert out["comment-url"] == comment["html_url"]
    assert f"#{base_artifact} from push run" in first.log
    assert marker_for(CONFIG_NAME) in first.summary
    # Where the baseline came from reaches the summary once, as a note of the report
    # (escaped like all untrusted text: a word joiner, &#8288;, follows every '#').
    plain_summary = first.summary.replace("&#8288;", "").replace("&#39;", "'")
    assert plain_summary.count(f"#{base_artifact} from push run") == 1
    blob_requests_carry_no_token(fake_github)
    assert {r.path for r in fake_github.blob_requests} == {f"/blob/{base_artifact}"}

    second = run_step(
        installed,
        job_for(
            fake_github,
            tmp_path / "run2",
            "pull_request",
            pr_payload(fake_github),
            config=REGRESSED,
        ),
    )
    assert_ok_step(second)
    assert second.returncode == 1, second.stdout + second.stderr
    out = second.outputs
    assert (out["verdict"], out["comment"]) == ("fail", "updated")
    assert int(out["blocking-failures"]) >= 1
    assert out["comment-url"] == comment["html_url"]
    *others, updated = fake_github.comments[7]  # still one bot comment, same id, new body
    assert others == humans
    assert quoted["body"].startswith("> <!-- evalkit")  # the reviewer's comment untouched
    assert updated["id"] == comment["id"]
    assert updated["body"] != first_body
    assert "FAIL" in updated["body"]
    assert updated["body"] == (second.job.workspace / REPORT_DIR / "comment.md").read_text()
    assert len(fake_github.api_calls("POST", "/comments")) == 1
    assert [r.path for r in fake_github.api_calls("PATCH")] == [
        f"/repos/{fake_github.full_name}/issues/comments/{comment['id']}"
    ]
    pages = [r.query.get("page", ["1"])[0] for r in fake_github.api_calls("GET", "/7/comments")]
    assert pages == ["1", "2", "1", "2", "3"]  # every page read, in both runs
    # Failing checks are annotated on the checks file, at their `id:` line.
    errors = [line for line in second.log.splitlines() if line.startswith("::error ")]
    failed = json.loads(second.path("report-json").read_text())
    failed_ids = [c["id"] for c in failed["checks"] if c["status"] == "fail"]
    assert failed_ids == failed["summary"]["blocking_failures"]
    assert len(failed_ids) == int(out["blocking-failures"]) == len(errors)
    for check_id, line in zip(failed_ids, errors, strict=True):
        where = f"file={CHECKS_FILE},line={id_line(check_id)},title=evalkit check {check_id} failed"
        assert line.startswith(f"::error {where}::{check_id}: "), line
    assert "exit 1" in second.stdout


def test_action_e2e_fork_pr_reports_without_commenting(
    installed: Installed, fake_github: FakeGitHub, tmp_path: Path
) -> None:
    seed_baseline(fake_github)
    job = job_for(
        fake_github, tmp_path, "pull_request", pr_payload(fake_github, fork=True), config=REGRESSED
    )
    step = run_step(installed, job)
    assert_ok_step(step)
    assert step.returncode == 1, step.stdout + step.stderr  # the verdict, not a comment error
    assert (step.outputs["verdict"], step.outputs["comment"]) == ("fail", "skipped-fork")
    assert "comes from a fork" in step.stdout
    # The read-only token is never used to write, nor to look for a comment to update.
    assert [r.method for r in fake_github.requests if r.method != "GET"] == []
    assert fake_github.api_calls("GET", "/comments") == []
    assert fake_github.comments == {}
    # Summary, report files and the bundle the workflow_run companion will post.
    assert marker_for(CONFIG_NAME) in step.summary
    assert "FAIL" in step.summary
    assert json.loads(step.path("report-json").read_text())["verdict"] == "fail"
    bundle = job.workspace / REPORT_DIR
    assert json.loads((bundle / "comment.json").read_text()) == {
        "config_name": CONFIG_NAME,
        "pr_number": 7,
        "head_sha": HEAD_SHA,
        "repository": fake_github.full_name,
    }
    assert (bundle / "comment.md").read_text().startswith(marker_for(CONFIG_NAME))


def test_action_e2e_expired_baseline_is_a_loud_no_baseline(
    installed: Installed, fake_github: FakeGitHub, tmp_path: Path
) -> None:
    seed_baseline(fake_github, expired=True, expires_at="2024-04-01T00:00:00Z")
    step = run_step(
        installed, job_for(fake_github, tmp_path, "pull_request", pr_payload(fake_github))
    )
    assert_ok_step(step)
    assert step.returncode == 0, step.stdout + step.stderr
    out = step.outputs
    assert (out["baseline-status"], out["baseline-source"], out["baseline-sha"]) == (
        "expired",
        "none",
        "",
    )
    warning = next(line for line in step.log.splitlines() if line.startswith("::warning"))
    assert warning.startswith("::warning title=evalkit: no baseline::no baseline (expired)")
    assert "expired on 2024-04-01" in warning
    assert "blocking" not in warning
    assert fake_github.blob_requests == []  # an expired artifact is not even downloaded
    report = json.loads(step.path("report-json").read_text())
    statuses = {c["id"]: c["status"] for c in report["checks"]}
    assert statuses["no_ndcg_regression"] == statuses["recall_not_worse"] == "no-baseline"
    assert "expired on 2024-04-01" in step.summary
    assert "No baseline" in step.summary
    assert out["comment"] == "created"


def test_action_e2e_expired_baseline_blocks_with_require_baseline(
    installed: Installed, fake_github: FakeGitHub, tmp_path: Path
) -> None:
    seed_baseline(fake_github, expired=True, expires_at="2024-04-01T00:00:00Z")
    job = job_for(
        fake_github, tmp_path, "pull_request", pr_payload(fake_github), require_baseline="true"
    )
    step = run_step(installed, job)
    assert_ok_step(step)
    assert step.returncode == 1, step.stdout + step.stderr
    assert (step.outputs["verdict"], step.outputs["baseline-status"]) == ("fail", "expired")
    assert "blocking: require-baseline is on" in step.log
    report = json.loads(step.path("report-json").read_text())
    assert set(report["summary"]["blocking_failures"]) == {
        "no_ndcg_regression",
        "recall_not_worse",
    }


def test_action_e2e_require_baseline_input_false_overrides_evalkit_yaml(
    installed: Installed, fake_github: FakeGitHub, tmp_path: Path
) -> None:
    """Input > evalkit.yaml: the action and the gate must agree that nothing blocks."""
    job = job_for(
        fake_github, tmp_path, "pull_request", pr_payload(fake_github), require_baseline="false"
    )
    config = job.workspace / GOOD
    config.write_text(config.read_text() + "require_baseline: true\n")
    step = run_step(installed, job)
    assert_ok_step(step)
    assert step.returncode == 0, step.stdout + step.stderr
    # not blocking, but a check without its baseline is never a green pass
    assert (step.outputs["verdict"], step.outputs["baseline-status"]) == ("warn", "missing")
    assert "no baseline (missing)" in step.log
    assert "require-baseline is on" not in step.log
    assert "::error" not in step.log
    report = json.loads(step.path("report-json").read_text())
    assert report["summary"]["blocking_failures"] == []


def spoofed_baseline() -> bytes:
    """The v1 run with every score zeroed: against it, the regressed build looks better."""
    spoof = json.loads(BASELINE_V1)
    spoof["run_name"] = "recipes-spoofed"
    for row in spoof["rows"]:
        row["metrics"] = dict.fromkeys(row["metrics"], 0.0)
    return json.dumps(spoof).encode()


def test_action_e2e_spoofed_fork_artifact_is_ignored(
    installed: Installed, fake_github: FakeGitHub, tmp_path: Path
) -> None:
    genuine = seed_baseline(fake_github, head_sha=OLD_SHA, created_at="2024-04-01T00:00:00Z")
    # Newer, same name, from a branch called main, built "at the PR's base commit" — by a
    # run of a fork, whose baseline would hide the PR's regression.
    spoofed = seed_baseline(
        fake_github,
        head_sha=BASE_SHA,
        head_repository_id=9999,
        created_at="2024-05-02T00:00:00Z",
        data=spoofed_baseline(),
    )
    spoof_run = fake_github.artifacts[-1]["workflow_run"]["id"]
    job = job_for(fake_github, tmp_path, "pull_request", pr_payload(fake_github), config=REGRESSED)
    step = run_step(installed, job)
    assert_ok_step(step)
    assert step.returncode == 1, step.stdout + step.stderr
    assert (step.outputs["baseline-status"], step.outputs["baseline-sha"]) == ("found", OLD_SHA)
    assert f"#{genuine} from push run" in step.log
    report = json.loads(step.path("report-json").read_text())
    assert report["baseline"]["name"] == "recipes-v1"
    assert "no_ndcg_regression" in report["summary"]["blocking_failures"]
    # The spoof was never fetched: not its run, not its archive.
    assert {r.path for r in fake_github.blob_requests} == {f"/blob/{genuine}"}
    assert not fake_github.api_calls("GET", f"/actions/artifacts/{spoofed}")
    assert not fake_github.api_calls("GET", f"/actions/runs/{spoof_run}")
    blob_requests_carry_no_token(fake_github)


def test_action_e2e_only_a_spoofed_artifact_means_no_baseline(
    installed: Installed, fake_github: FakeGitHub, tmp_path: Path
) -> None:
    seed_baseline(fake_github, head_repository_id=9999)
    step = run_step(
        installed, job_for(fake_github, tmp_path, "pull_request", pr_payload(fake_github))
    )
    assert_ok_step(step)
    assert step.returncode == 0, step.stdout + step.stderr
    assert step.outputs["baseline-status"] == "missing"
    assert "1 uploaded by a run of another repository (fork)" in step.log
    assert fake_github.blob_requests == []


def test_action_e2e_github_5xx_while_commenting_warns_and_keeps_verdict(
    installed: Installed, fake_github: FakeGitHub, tmp_path: Path
) -> None:
    seed_baseline(fake_github)
    fake_github.fail("GET", r"/issues/7/comments$", 503, times=1)  # transient: retried
    fake_github.fail("POST", r"/issues/7/comments$", 502, times=100)  # an outage
    job = job_for(fake_github, tmp_path, "pull_request", pr_payload(fake_github), config=REGRESSED)
    step = run_step(installed, job)
    assert_ok_step(step)
    assert step.returncode == 1, step.stdout + step.stderr  # the verdict, not 3
    assert (step.outputs["verdict"], step.outputs["comment"]) == ("fail", "failed")
    # Listed again before each re-post: a create lost to a 5xx may have landed.
    assert [r.status for r in fake_github.api_calls("GET", "/issues/7/comments")] == [
        503,
        200,
        200,
        200,
    ]
    assert [r.status for r in fake_github.api_calls("POST", "/issues/7/comments")] == [502] * 3
    warning = next(line for line in step.log.splitlines() if "no PR comment" in line)
    assert warning.startswith("::warning title=evalkit: no PR comment::could not comment on PR #7")
    assert "gave up after 3 attempts" in warning
    assert "FAIL" in step.summary


def promote_job(fake: FakeGitHub, tmp: Path, **inputs: str) -> Job:
    job = job_for(fake, tmp, "push", push_payload(fake), mode="promote", **inputs)
    assert job.env["GITHUB_REF"] == "refs/heads/main"
    assert job.env["GITHUB_SHA"] == PUSH_SHA
    return job


def test_action_e2e_promote_on_push_writes_artifact_the_next_pr_uses(
    installed: Installed, fake_github: FakeGitHub, tmp_path: Path
) -> None:
    push = run_step(installed, promote_job(fake_github, tmp_path / "push"))
    assert_ok_step(push)
    assert push.returncode == 0, push.stdout + push.stderr
    assert push.outputs["baseline-path"] == f"{REPORT_DIR}/baseline"
    assert push.outputs["promoted-path"] == f"{REPORT_DIR}/baseline/{CONFIG_NAME}.json"
    assert (push.outputs["baseline-source"], push.outputs["baseline-sha"]) == (
        "artifact",
        PUSH_SHA,
    )
    assert [r.method for r in fake_github.requests if r.method != "GET"] == []
    upload = push.path("baseline-path")
    assert [p.name for p in upload.iterdir()] == [f"{CONFIG_NAME}.json"]
    promoted = read_artifact(upload / f"{CONFIG_NAME}.json")
    assert (promoted.config_name, promoted.git_commit) == (CONFIG_NAME, PUSH_SHA)
    assert "upload it with actions/upload-artifact" in push.stdout

    # actions/upload-artifact zips the folder's contents; the next PR finds that artifact.
    archive = make_zip({p.name: p.read_bytes() for p in upload.iterdir()})
    artifact_id = fake_github.add_artifact(archive, head_sha=PUSH_SHA)
    pr = run_step(
        installed,
        job_for(fake_github, tmp_path / "pr", "pull_request", pr_payload(fake_github)),
    )
    assert_ok_step(pr)
    assert pr.returncode == 0, pr.stdout + pr.stderr
    assert (pr.outputs["baseline-status"], pr.outputs["baseline-sha"]) == ("found", PUSH_SHA)
    assert f"#{artifact_id} from push run" in pr.log
    report = json.loads(pr.path("report-json").read_text())
    assert report["baseline"]["name"] == "recipes-v2"  # the promoted run, not the v1 file
    blob_requests_carry_no_token(fake_github)


def test_action_e2e_promote_on_push_commits_branch_store_the_next_pr_uses(
    installed: Installed, fake_github: FakeGitHub, tmp_path: Path
) -> None:
    job = promote_job(fake_github, tmp_path / "push", baseline_store="branch")
    job.env["GITHUB_SHA"] = BASE_SHA  # the merge the PR below is based on
    push = run_step(installed, job)
    assert_ok_step(push)
    assert push.returncode == 0, push.stdout + push.stderr
    assert push.outputs["baseline-source"] == "branch"
    assert push.outputs["promoted-path"] == f"evalkit-baselines:latest/{CONFIG_NAME}.json"
    stored = fake_github.git.file_at("evalkit-baselines", f"{BASE_SHA}/{CONFIG_NAME}.json")
    assert stored == fake_github.git.file_at("evalkit-baselines", f"latest/{CONFIG_NAME}.json")
    assert stored is not None
    assert json.loads(stored)["run_name"] == "recipes-v2"

    pr = run_step(
        installed,
        job_for(
            fake_github,
            tmp_path / "pr",
            "pull_request",
            pr_payload(fake_github),
            config=REGRESSED,
            baseline_store="branch",
        ),
    )
    assert_ok_step(pr)
    assert pr.returncode == 1, pr.stdout + pr.stderr
    assert (pr.outputs["baseline-source"], pr.outputs["baseline-sha"]) == ("branch", BASE_SHA)
    assert pr.outputs["verdict"] == "fail"
    assert fake_github.api_calls("GET", "/actions/artifacts") == []


def test_action_e2e_pin_on_the_default_branch_pins_the_promotion(
    installed: Installed, fake_github: FakeGitHub, tmp_path: Path
) -> None:
    push = run_step(installed, promote_job(fake_github, tmp_path / "push", baseline_store="branch"))
    assert push.returncode == 0, push.stdout + push.stderr
    job = job_for(
        fake_github,
        tmp_path / "pin",
        "workflow_dispatch",
        push_payload(fake_github),
        mode="pin",
        pin="0 promotions ago",
        baseline_store="branch",
    )
    job.env["GITHUB_REF"] = "refs/heads/main"
    pin = run_step(installed, job)
    assert_ok_step(pin)
    assert pin.returncode == 0, pin.stdout + pin.stderr
    assert pin.outputs["reference-sha"] == PUSH_SHA
    assert pin.outputs["reference-path"] == f"evalkit-baselines:reference/{CONFIG_NAME}.json"
    git = fake_github.git
    pinned = git.file_at("evalkit-baselines", f"reference/{CONFIG_NAME}.json")
    assert pinned == git.file_at("evalkit-baselines", f"latest/{CONFIG_NAME}.json")
    assert "reference pinned" in pin.summary


def fork_bundle(installed: Installed, fake: FakeGitHub, tmp: Path, dest: Path) -> None:
    """Run a fork PR's gate; put its report bundle where download-artifact would, at dest."""
    seed_baseline(fake)
    job = job_for(fake, tmp / "fork", "pull_request", pr_payload(fake, fork=True), config=REGRESSED)
    step = run_step(installed, job)
    assert (step.returncode, step.outputs["comment"]) == (1, "skipped-fork"), step.stdout
    shutil.copytree(job.workspace / REPORT_DIR, dest)
    # The fork controls the bundle: it tries to page people and to aim at another comment.
    body = dest / "comment.md"
    body.write_text(body.read_text() + "\ncc @octo/admins\n" + marker_for("other-config"))


def companion_job(fake: FakeGitHub, tmp: Path, *, head_sha: str) -> Job:
    """The workflow_run job in the base repository, after the fork's run completed."""
    payload = {
        "workflow_run": {
            "id": 99,
            "event": "pull_request",
            "head_sha": head_sha,
            "head_branch": "feature",
            "head_repository": {"full_name": "mallory/widgets"},
            "conclusion": "failure",
        },
        "repository": push_payload(fake)["repository"],
    }
    # Like the companion workflow: no checkout, so no config in the workspace.
    return make_job(fake, tmp / "companion", "workflow_run", payload, files={})


def test_github_e2e_comment_from_dir_posts_fork_report_after_sha_check(
    installed: Installed, fake_github: FakeGitHub, tmp_path: Path
) -> None:
    fake_github.add_pull(7, head_sha=HEAD_SHA)
    job = companion_job(fake_github, tmp_path, head_sha=HEAD_SHA)
    fork_bundle(installed, fake_github, tmp_path, job.workspace / "evalkit-report")
    step = run_step(installed, job, "comment", "--from", "evalkit-report")
    assert_ok_step(step)
    assert step.returncode == 0, step.stdout + step.stderr
    assert (step.outputs["comment"], step.outputs["config-name"]) == ("created", CONFIG_NAME)
    assert fake_github.api_calls("GET", "/pulls/7")  # the PR number was checked
    (body,) = fake_github.comment_bodies(7)
    assert body.startswith(marker_for(CONFIG_NAME))
    assert "FAIL" in body
    assert marker_for("other-config") not in body
    assert "@octo/admins" not in body
    assert "@\u200bocto/admins" in body

    # The companion runs again (a re-run of the fork's workflow): same comment, no new one.
    again = run_step(installed, job, "comment", "--from", "evalkit-report")
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.outputs["comment"] == "unchanged"
    assert len(fake_github.comment_bodies(7)) == 1


def test_github_e2e_comment_from_dir_refuses_a_report_for_another_commit(
    installed: Installed, fake_github: FakeGitHub, tmp_path: Path
) -> None:
    fake_github.add_pull(7, head_sha="f" * 40)  # the PR has moved on since that run
    job = companion_job(fake_github, tmp_path, head_sha=HEAD_SHA)
    # A `run:` step with a working-directory: --from is relative to it, like any CLI path.
    downloads = job.workspace / "downloads"
    fork_bundle(installed, fake_github, tmp_path, downloads / "evalkit-report")
    step = run_step(installed, job, "comment", "--from", "evalkit-report", cwd=downloads)
    assert_ok_step(step)
    assert step.returncode == 0, step.stdout + step.stderr
    assert step.outputs["comment"] == "refused"
    assert "evalkit: comment refused" in step.log
    assert "ffffffffffff" in step.log
    assert fake_github.comments == {}


def test_action_e2e_other_configs_baseline_turns_the_pass_comment_into_an_error(
    installed: Installed, fake_github: FakeGitHub, tmp_path: Path
) -> None:
    seed_baseline(fake_github)
    first = run_step(
        installed, job_for(fake_github, tmp_path / "run1", "pull_request", pr_payload(fake_github))
    )
    assert_ok_step(first)
    assert (first.returncode, first.outputs["comment"]) == (0, "created")
    # A newer baseline appears, under this config's file name but recorded for another
    # config (two configs sharing one artifact name): refused, exit 2, and the PR's PASS
    # comment now says the gate could not decide.
    other = json.loads(BASELINE_V1)
    other["config_name"] = "another-config"
    seed_baseline(fake_github, data=json.dumps(other).encode(), created_at="2024-06-01T00:00:00Z")
    second = run_step(
        installed, job_for(fake_github, tmp_path / "run2", "pull_request", pr_payload(fake_github))
    )
    assert_ok_step(second)
    assert second.returncode == 2, second.stdout + second.stderr
    assert (second.outputs["verdict"], second.outputs["comment"]) == ("error", "updated")
    (body,) = fake_github.comment_bodies(7)
    assert body.startswith(marker_for(CONFIG_NAME))
    assert "### evalkit: error (exit 2)" in body
    assert "'another-config', not 'recipes'" in body.replace("&#39;", "'")
    assert "PASS" not in body


def test_action_e2e_target_requirements_installs_the_targets_own_package(
    installed: Installed, fake_github: FakeGitHub, tmp_path: Path
) -> None:
    """As in the image: a bare venv without pip; pip comes from its base interpreter, and
    the target's package lands beside the venv, never in it (docs/action.md)."""
    from helpers.wheels import build_wheel

    job = job_for(
        fake_github, tmp_path, "pull_request", pr_payload(fake_github),
        config="deps/evalkit.yaml", baseline_store="none",
        target_requirements="deps/requirements.txt",
    )  # fmt: skip
    deps = job.workspace / "deps"
    build_wheel(deps / "wheels", "evalkit_fixture_dep", "1.0", {"evalkit_fixture_dep/__init__.py": "ANSWER = ['a']\n"})  # fmt: skip  # noqa: E501
    files = {
        "evalkit.yaml": "name: deps\ngoldens: goldens.jsonl\nchecks: checks.yaml\n"
        "metrics: [recall@1]\ntarget:\n  python: 'dep_target:make'\n",
        "checks.yaml": "checks:\n  - {id: floor, metric: recall@1, op: '>=', threshold: 1}\n",
        "goldens.jsonl": '{"id": "q1", "query": "anything", "relevant": ["a"]}\n',
        "dep_target.py": "import evalkit_fixture_dep\n\n\ndef make():\n"
        "    return lambda case: evalkit_fixture_dep.ANSWER\n",
        "requirements.txt": "--no-index\n--find-links wheels\nevalkit_fixture_dep==1.0\n",
    }
    for name, text in files.items():
        (deps / name).write_text(text)
    step = run_step(installed, job)
    assert_ok_step(step)
    assert step.returncode == 0, step.stdout + step.stderr
    assert step.outputs["verdict"] == "pass"
    assert "installed the python target's packages into" in step.stdout
    venv_packages = list(installed.venv.glob("lib/python*/site-packages/evalkit_fixture_dep"))
    assert venv_packages == []  # the image's environment is left as it was
