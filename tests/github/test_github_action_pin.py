"""The Action's ``mode: pin``: pin, re-pin, refuse, and what the gate side then reads."""

from __future__ import annotations

import json
from pathlib import Path

from actions_job import Job, make_job, pr_payload, push_payload
from fake_github import (  # noqa: F401  (the *_fixture names register fixtures)
    FakeGitHub,
    fake_github_fixture,
    github_factory_for_tests,
    make_zip,
)
from test_github_action import StubGate
from test_github_branch_store import store_for

from evalkit._store.protocol import FetchRequest

CONFIG = "evals-evalkit"


def commits(fake: FakeGitHub, n: int) -> list[str]:
    """``n`` commits of the default branch, each on the one before (tags can name them)."""
    return [fake.git.push() for _ in range(n)]


def promote_all(fake: FakeGitHub, tmp_path: Path, shas: list[str]) -> None:
    for i, sha in enumerate(shas):
        job = make_job(
            fake,
            tmp_path / f"push{i}",
            "push",
            push_payload(fake),
            mode="promote",
            baseline_store="branch",
        )
        job.env["GITHUB_SHA"] = sha
        assert job.run(StubGate()) == 0, job.log()


def pin_job(fake: FakeGitHub, tmp_path: Path, pin: str, store: str = "") -> Job:
    job = make_job(fake, tmp_path, "workflow_dispatch", push_payload(fake), mode="pin", pin=pin)
    if store:
        job.env["INPUT_BASELINE-STORE"] = store
    job.env["GITHUB_REF"] = "refs/heads/main"
    return job


def reference_sha(fake: FakeGitHub, tmp_path: Path) -> str | None:
    fetched = store_for(fake).fetch_reference(FetchRequest(CONFIG, tmp_path))
    return fetched.sha if fetched.found else None


def test_pin_on_the_branch_store_then_repin_by_tag(fake_github: FakeGitHub, tmp_path: Path) -> None:
    shas = commits(fake_github, 4)
    promote_all(fake_github, tmp_path, shas)
    job = pin_job(fake_github, tmp_path / "pin1", "2 promotions ago", store="branch")
    assert job.run(StubGate()) == 0, job.log()
    out = job.outputs()
    assert out["reference-sha"] == shas[1]
    assert out["reference-source"] == "branch"
    assert out["reference-path"] == f"evalkit-baselines:reference/{CONFIG}.json"
    assert out["exit-code"] == "0"
    assert "reference pinned" in job.summary()
    assert reference_sha(fake_github, tmp_path / "r1") == shas[1]

    # re-pin to a release: an annotated tag on the third promotion's commit
    fake_github.git.annotated_tag("v1.0", shas[2])
    again = pin_job(fake_github, tmp_path / "pin2", "v1.0", store="branch")
    assert again.run(StubGate()) == 0, again.log()
    assert again.outputs()["reference-sha"] == shas[2]
    assert reference_sha(fake_github, tmp_path / "r2") == shas[2]
    # and a lightweight tag
    fake_github.git.refs["tags/v0.9"] = shas[0]
    light = pin_job(fake_github, tmp_path / "pin3", "tag:v0.9", store="branch")
    assert light.run(StubGate()) == 0, light.log()
    assert light.outputs()["reference-sha"] == shas[0]
    # a tag that does not exist is a one-line input error, and the pin stays
    missing = pin_job(fake_github, tmp_path / "pin4", "v7", store="branch")
    assert missing.run(StubGate()) == 2
    assert "tag or release 'v7' does not exist" in missing.log()
    assert reference_sha(fake_github, tmp_path / "r3") == shas[0]


def test_pin_on_the_artifact_store_leaves_the_upload(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    for i, sha in enumerate(["1" * 40, "2" * 40]):
        doc = {"schema_version": 1, "rows": [], "n": i, "git": {"commit": sha}}
        fake_github.add_artifact(
            make_zip({f"{CONFIG}.json": json.dumps(doc).encode()}),
            head_sha=sha,
            created_at=f"2024-05-0{i + 1}T00:00:00Z",
        )
    job = pin_job(fake_github, tmp_path, "1 promotion ago")
    assert job.run(StubGate()) == 0, job.log()
    out = job.outputs()
    assert out["reference-sha"] == "1" * 40
    assert out["reference-name"] == "evalkit-baseline-reference"
    assert out["reference-path"] == ".evalkit/action/reference"
    folder = job.workspace / out["reference-path"]
    assert sorted(p.name for p in folder.iterdir()) == [f"{CONFIG}.json", f"{CONFIG}.pin.json"]
    assert json.loads((folder / f"{CONFIG}.json").read_text())["n"] == 0


def test_pin_refuses_a_pull_request_and_a_missing_input(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    pr = make_job(
        fake_github,
        tmp_path / "pr",
        "pull_request",
        pr_payload(fake_github),
        mode="pin",
        pin="0",
        baseline_store="branch",
    )
    assert pr.run(StubGate()) == 2
    assert "mode: pin runs only on main" in pr.log().replace("%3A", ":")
    assert fake_github.api_calls("POST") == []
    bare = make_job(fake_github, tmp_path / "bare", "push", push_payload(fake_github), mode="pin")
    assert bare.run(StubGate()) == 2
    assert "input pin is required with mode: pin" in bare.log().replace("%3A", ":")
    assert bare.outputs()["verdict"] == "error"
    bad = pin_job(fake_github, tmp_path / "bad", "someday soon")
    assert bad.run(StubGate()) == 2
    assert "input pin: 'someday soon' is neither" in bad.log().replace("%3A", ":")


def test_pin_with_nothing_promoted_is_an_input_error(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    job = pin_job(fake_github, tmp_path, "0", store="branch")
    assert job.run(StubGate()) == 2
    assert "no promotion is recorded yet" in job.log().replace("%3A", ":")
    assert job.outputs()["exit-code"] == "2"


def test_pin_on_the_file_store(fake_github: FakeGitHub, tmp_path: Path) -> None:
    workspace: Path | None = None  # one workspace for every job, as a cache would restore it
    for i in range(2):
        job = make_job(
            fake_github,
            tmp_path / f"push{i}",
            "push",
            push_payload(fake_github),
            mode="promote",
            baseline_store="file",
            baseline_path="evals/baseline.json",
        )
        workspace = workspace or job.workspace
        job.env["GITHUB_WORKSPACE"] = str(workspace)
        job.env["GITHUB_SHA"] = f"{i + 1}" * 40
        assert job.run(StubGate()) == 0, job.log()
    pin = pin_job(fake_github, tmp_path / "pin", "1 promotion ago", store="file")
    pin.env["GITHUB_WORKSPACE"] = str(workspace)
    pin.env["INPUT_BASELINE-PATH"] = "evals/baseline.json"
    assert pin.run(StubGate()) == 0, pin.log()
    out = pin.outputs()
    assert out["reference-sha"] == "1" * 40
    assert out["reference-source"] == "file"
    assert out["reference-path"] == f"evals/.evalkit/history/{CONFIG}/reference.json"
