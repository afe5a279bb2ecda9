"""The Action fetches the pinned reference for drift checks, and only for them (issue #16).

Against the fake GitHub: the reference the store pinned reaches the gate as a
``BaselineFetch``; an expired or missing one reaches it too (the gate makes it a loud
``no-reference``), with a warning in the job log; a checks file with no drift check
costs no reference fetch at all.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

from actions_job import CHECKS, DEFAULT_FILES, Job, make_job, pr_payload
from fake_github import (  # noqa: F401  (the *_fixture names register fixtures)
    FakeGitHub,
    fake_github_fixture,
    make_zip,
)
from test_github_action import ARTEFACT, StubGate

from evalkit._spec.config import load_config
from evalkit._store.history import PinRecord
from evalkit._store.protocol import BaselineFetch
from evalkit.action.contract import GateRequest

CONFIG = "evals-evalkit"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "custom_client"
DRIFT_CHECKS = CHECKS + (
    "\n  - id: no_ndcg_drift\n    metric: ndcg@10\n    vs_reference: no_significant_regression\n"
)
WITH_DRIFT = {**DEFAULT_FILES, "evals/checks.yaml": DRIFT_CHECKS}
REFERENCE = b'{"schema_version": 1, "rows": [], "from": "the pinned reference"}'
T0 = datetime(2026, 9, 1, 10, 0, tzinfo=UTC)
NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def pin_record() -> bytes:
    record = PinRecord("3 promotions ago", "release v1.4", "a" * 40, T0, None, NOW)
    return record.to_json().encode()


def pin_on_branch(fake: FakeGitHub) -> None:
    """A branch store with a baseline and a pinned reference, as mode: pin leaves it."""
    fake.git.commit_files(
        "evalkit-baselines",
        {
            f"latest/{CONFIG}.json": ARTEFACT,
            f"reference/{CONFIG}.json": REFERENCE,
            f"reference/{CONFIG}.pin.json": pin_record(),
        },
    )


def drift_pr_job(fake_github: FakeGitHub, tmp_path: Path) -> Job:
    """A pull-request job whose checks have a drift check, on the branch store."""
    return make_job(
        fake_github,
        tmp_path,
        "pull_request",
        pr_payload(fake_github),
        files=WITH_DRIFT,
        baseline_store="branch",
    )


def test_the_pinned_branch_reference_reaches_the_gate(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    pin_on_branch(fake_github)
    job = drift_pr_job(fake_github, tmp_path)
    gate = StubGate()
    assert job.run(gate) == 0, job.log()
    fetched = gate.requests[0].reference
    assert fetched is not None
    assert (fetched.status, fetched.source) == ("found", "branch")
    assert fetched.path is not None
    assert fetched.path.read_bytes() == REFERENCE
    assert fetched.path != gate.requests[0].baseline_path  # its own file, beside the baseline
    assert "evalkit reference: " in job.log()
    outputs = job.outputs()
    assert (outputs["reference-status"], outputs["reference-source"]) == ("found", "branch")
    assert outputs["reference-sha"] == "a" * 40


def test_an_expired_reference_artifact_reaches_the_gate_as_an_answer(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    fake_github.add_artifact(make_zip({f"{CONFIG}.json": ARTEFACT}), head_sha="f" * 40)
    fake_github.add_artifact(
        make_zip({f"{CONFIG}.json": REFERENCE, f"{CONFIG}.pin.json": pin_record()}),
        name="evalkit-baseline-reference",
        event="workflow_dispatch",
        expired=True,
        expires_at="2026-11-20T00:00:00Z",
    )
    job = make_job(fake_github, tmp_path, "pull_request", pr_payload(fake_github), files=WITH_DRIFT)
    gate = StubGate()
    assert job.run(gate) == 0, job.log()
    fetched = gate.requests[0].reference
    assert fetched is not None
    assert (fetched.status, fetched.path) == ("expired", None)
    assert "expired on 2026-11-20" in fetched.detail
    log = job.log()
    assert "no reference (expired)" in log
    assert "drift checks report no-reference" in log
    assert "require-reference is on" not in log
    outputs = job.outputs()
    assert (outputs["reference-status"], outputs["reference-source"]) == ("expired", "none")
    assert gate.requests[0].config.model.require_reference is False
    # require-reference: the gate is told, and the log says the no-reference blocks
    job.env["INPUT_REQUIRE-REFERENCE"] = "true"
    gate = StubGate(verdict="fail", exit_code=1)
    assert job.run(gate) == 1, job.log()
    assert gate.requests[0].config.model.require_reference is True
    assert "no reference (expired)" in job.log()
    assert "blocking: require-reference is on" in job.log()


def test_no_drift_check_fetches_no_reference(fake_github: FakeGitHub, tmp_path: Path) -> None:
    pin_on_branch(fake_github)
    job = make_job(
        fake_github, tmp_path, "pull_request", pr_payload(fake_github), baseline_store="branch"
    )
    gate = StubGate()
    assert job.run(gate) == 0, job.log()
    assert gate.requests[0].reference is None
    assert fake_github.api_calls(contains="reference") == []
    outputs = job.outputs()
    assert (outputs["reference-status"], outputs["reference-source"]) == ("none", "none")


# -- the real gate behind the Action (github.gate_adapter) ---------------------------------


def adapter_request(
    tmp_path: Path, reference: BaselineFetch | None, *, require_reference: bool = False
) -> GateRequest:
    """The recipe example (ranker v2) with a drift check; the committed v1 run as baseline."""
    example = tmp_path / "example"
    shutil.copytree(EXAMPLE, example)
    checks = example / "checks.yaml"
    checks.write_text(
        checks.read_text()
        + "\n  - id: no_ndcg_drift\n    metric: ndcg@10\n"
        + "    vs_reference: no_significant_regression\n"
    )
    config = load_config(example / "evalkit.yaml")
    return GateRequest(
        config_name=config.name,
        config=config.with_overrides(require_reference=require_reference),
        baseline_path=example / "baseline.json",
        baseline_status="found",
        baseline_detail="the committed v1 run",
        output_dir=tmp_path / "out",
        reference=reference,
    )


def test_the_action_gate_decides_drift_checks_on_the_fetched_reference(tmp_path: Path) -> None:
    from evalkit.action.gate_runner import pipeline_gate

    v1 = EXAMPLE / "baseline.json"
    found = BaselineFetch("found", v1, "branch", "pinned: release v1 (3 promotions ago)", None)
    outcome = pipeline_gate(adapter_request(tmp_path / "found", found))
    report = json.loads(outcome.report_paths["json"].read_text())
    drift = next(c for c in report["checks"] if c["id"] == "no_ndcg_drift")
    per_pr = next(c for c in report["checks"] if c["id"] == "no_ndcg_regression")
    assert drift["kind"] == "vs_reference"
    assert drift["comparison"] == per_pr["comparison"]  # v1 is both baseline and reference
    assert report["reference"]["detail"] == "pinned: release v1 (3 promotions ago)"
    assert "**Reference** " in outcome.markdown

    gone = BaselineFetch("expired", None, "artifact", "the pinned reference expired on 11-20")
    outcome = pipeline_gate(adapter_request(tmp_path / "gone", gone))
    report = json.loads(outcome.report_paths["json"].read_text())
    drift = next(c for c in report["checks"] if c["id"] == "no_ndcg_drift")
    assert drift["status"] == "no-reference"
    assert report["verdict"] != "pass"
    assert "No reference (expired)" in outcome.markdown
    assert outcome.exit_code == 0  # loud, but blocking only with require-reference

    required = adapter_request(tmp_path / "required", gone, require_reference=True)
    outcome = pipeline_gate(required)
    assert outcome.exit_code == 1
    report = json.loads(outcome.report_paths["json"].read_text())
    assert report["summary"]["blocking_failures"] == ["no_ndcg_drift"]
    # the merged config decides: an explicit require-reference: false switches
    # evalkit.yaml's true off
    config = required.config.path
    config.write_text(config.read_text() + "require_reference: true\n")
    switched_off = dataclasses.replace(
        required, config=load_config(config).with_overrides(require_reference=False)
    )
    assert pipeline_gate(switched_off).exit_code == 0


def test_a_github_outage_while_fetching_the_reference_is_a_runtime_error_naming_it(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    """Like the baseline: an outage is never read as "no reference" (exit 3, not a pass)."""
    pin_on_branch(fake_github)
    fake_github.fail("GET", r"/contents/reference/", 503, times=20)
    job = drift_pr_job(fake_github, tmp_path)
    gate = StubGate()
    assert job.run(gate) == 3, job.log()
    assert gate.requests == []  # the gate never ran on a missing reference
    assert job.outputs()["reference-status"] == "error"
    assert "could not fetch the reference from GitHub" in job.log()
    assert job.outputs().get("baseline-status") != "error"  # the baseline itself was fetched


def test_the_actions_html_report_draws_the_trend_from_the_actions_store(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    """The HTML trend reads the promotions through the Action's store (GitHub access).

    Two promotions of the example's v1 run on the fake's branch store, the older one
    pinned; the real gate runs v2 in the Action: the page draws three points (two
    promotions, the candidate last), not "not drawn" for want of GitHub access.
    """
    from test_github_history import Clock, access_for

    from evalkit._store.history import parse_pin
    from evalkit._store.protocol import PinRequest, PromoteRequest
    from evalkit.action.gate_runner import pipeline_gate
    from evalkit.github.branch_store import BranchStore

    store = BranchStore(access_for(fake_github), sleep=lambda _s: None, now=Clock())
    for k in (1, 2):
        store.promote(PromoteRequest(EXAMPLE / "baseline.json", "recipes", f"{k}" * 40, tmp_path))
    pinned = store.pin(PinRequest("recipes", parse_pin("1"), tmp_path / "w", tmp_path / "w"))
    assert pinned is not None
    files = {
        f"evals/{p.name}": p.read_text()
        for p in EXAMPLE.iterdir()
        if p.is_file() and p.suffix in (".py", ".yaml", ".jsonl", ".json")
    }
    files["evals/checks.yaml"] += (
        "\n  - id: no_ndcg_drift\n    metric: ndcg@10\n"
        "    vs_reference: no_significant_regression\n"
    )
    job = make_job(
        fake_github,
        tmp_path,
        "pull_request",
        pr_payload(fake_github),
        files=files,
        baseline_store="branch",
        comment="false",
    )
    code = job.run(pipeline_gate)
    assert code in (0, 1), job.log()
    html = (job.workspace / job.outputs()["report-html"]).read_text()
    assert "Trend across promotions" in html
    assert "not drawn" not in html
    (plot,) = [part for part in html.split("<svg")[1:] if part.startswith(' class="trend"')]
    assert plot.count('<circle class="point"') == 2  # the two promotions ...
    assert plot.count('<circle class="candidate"') == 1  # ... and the candidate last
    assert 'stroke="#ef6c00"' in plot  # the pinned reference is ringed
    assert fake_github.api_calls(contains="history/recipes.json")
