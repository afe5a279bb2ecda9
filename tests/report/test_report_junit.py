"""``evalkit gate --junit``: valid JUnit XML whose failures are exactly the gate's blockers.

Every document is validated against tests/data/junit.xsd (the structure of Jenkins'
junit-10 schema, which GitLab, Azure DevOps and CircleCI read too); the mapping is
docs/junit.md.
"""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
import xmlschema

from evalkit._spec.checks import CheckSpec
from evalkit.gate.model import GateOptions, GateReport
from evalkit.gate.procedure import evaluate_gate
from evalkit.report.junit import render_junit
from helpers.cli import evalkit, write_files
from helpers.slice_runs import METRIC, story
from helpers.tiny_project import CHECKS, CONFIG, GOLDENS, TARGET_MODULE
from report import samples

SCHEMA = xmlschema.XMLSchema(Path(__file__).parents[1] / "data" / "junit.xsd")
SAMPLES: dict[str, Callable[[], GateReport]] = {
    name: getattr(samples, name)
    for name in (
        "passing",
        "failing",
        "no_baseline",
        "incomparable",
        "errored",
        "warned",
        "hostile",
        "drift",
        "no_reference",
        "repeats",
        "identical_rerun",
        "many",
    )
}


def sliced() -> GateReport:
    cand, base, _ = story()
    check = CheckSpec("by_slice", METRIC, vs_baseline="no_significant_regression", per_slice=True)
    return evaluate_gate([check], cand, base, GateOptions(n_resamples=500, seed=1))


def failed_cases() -> GateReport:
    report = samples.passing()
    run = dataclasses.replace(report.candidate, failed=(("q7", "timeout \x00 after 30 s"),))
    return dataclasses.replace(report, candidate=run)


SAMPLES |= {"sliced": sliced, "failed_cases": failed_cases}


def parse(text: str) -> ET.Element:
    SCHEMA.validate(text)
    return ET.fromstring(text)


def outcome(case: ET.Element) -> str:
    children = [child.tag for child in case]
    assert len(children) <= 1, children
    return children[0] if children else "passed"


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_valid_and_red_exactly_where_the_gate_blocks(name: str) -> None:
    report = SAMPLES[name]()
    root = parse(render_junit(report, config_name=f"cfg-{name}"))
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    outcomes = [outcome(c) for c in cases]
    red = outcomes.count("failure") + outcomes.count("error")
    slices = report.slices.verdicts if report.slices is not None else ()
    regressed_blocking = sum(
        1
        for s in slices
        if s.status == "regressed"
        and next(v for v in report.verdicts if v.check_id == s.check_id).level == "block"
    )
    expected_red = (
        len(report.blocking_failures) + regressed_blocking + bool(report.candidate.failed)
    )
    assert red == expected_red
    # One testcase per check in order, each followed by its slices; then a run with failed cases.
    expected = []
    for v in report.verdicts:
        expected.append(v.check_id)
        expected.extend(f"{v.check_id}[{s.slice}]" for s in slices if s.check_id == v.check_id)
    expected += ["candidate run"] * bool(report.candidate.failed)
    assert [c.get("name") for c in cases] == expected
    # The counts the CI tools print agree with the elements.
    for element in (root, suite):
        assert element.get("tests") == str(len(cases))
        assert element.get("failures") == str(outcomes.count("failure"))
        assert element.get("errors") == str(outcomes.count("error"))
    assert suite.get("skipped") == str(outcomes.count("skipped"))
    # A check that did not pass is never shown as passed; one that passed is never red.
    by_name = {c.get("name"): outcome(c) for c in cases}
    for v in report.verdicts:
        assert (by_name[v.check_id] == "passed") == (v.status == "pass"), v
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties["verdict"] == report.verdict
    assert properties["exit_code"] == str(int(report.exit_code))


def test_a_blocking_failure_carries_its_verdict_line() -> None:
    report = samples.failing()
    root = parse(render_junit(report, config_name="evalkit"))
    failures = {
        c.get("name"): c.find("failure")
        for c in root.iter("testcase")
        if c.find("failure") is not None
    }
    for v in report.blocking_failures:
        failure = failures[v.check_id]
        assert failure is not None
        message = failure.get("message") or ""
        assert message.startswith(f"{v.check_id} ({v.metric}): ")
        assert failure.get("type") == v.status
        assert v.message in (failure.text or "")


def test_warn_level_failures_and_no_baseline_are_skipped_with_their_message() -> None:
    for report in (samples.warned(), samples.no_baseline()):
        root = parse(render_junit(report, config_name="evalkit"))
        skipped = {c.get("name"): c.find("skipped") for c in root.iter("testcase")}
        for v in report.verdicts:
            if v.status != "pass" and not v.blocking:
                element = skipped[v.check_id]
                assert element is not None
                assert v.check_id in (element.get("message") or "")


def test_the_regressed_slice_is_a_failure_of_its_own() -> None:
    root = parse(render_junit(sliced(), config_name="evalkit"))
    by_name = {c.get("name"): outcome(c) for c in root.iter("testcase")}
    assert by_name["by_slice[tags=billing]"] == "failure"
    assert by_name["by_slice[tags=rare]"] == "skipped"  # too small to test
    assert by_name["by_slice[tags=search]"] == "passed"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    files = {"tiny_target.py": TARGET_MODULE, "goldens.jsonl": GOLDENS, "checks.yaml": CHECKS}
    root = write_files(tmp_path, {**files, "evalkit.yaml": CONFIG})
    assert evalkit("run", "--out", "base.json", cwd=root).returncode == 0
    return root


def test_gate_junit_file_and_stdout(project: Path) -> None:
    done = evalkit("gate", "--baseline", "base.json", "--junit", "junit.xml", cwd=project)
    assert done.returncode == 0, done.stderr
    written = (project / "junit.xml").read_text()
    root = parse(written)
    assert [c.get("name") for c in root.iter("testcase")] == ["floor", "no_regression"]
    assert evalkit("run", "--out", "cand.json", cwd=project).returncode == 0
    piped = evalkit(
        "gate", "--candidate", "cand.json", "--baseline", "base.json", "--junit", "-", cwd=project
    )
    assert piped.returncode == 0, piped.stderr
    assert [c.get("name") for c in parse(piped.stdout).iter("testcase")] == [
        "floor",
        "no_regression",
    ]
    assert "floor" in piped.stderr  # the human report moved to stderr


def test_gate_junit_red_when_the_gate_exits_1(project: Path) -> None:
    (project / "evalkit.yaml").write_text(CONFIG.replace("make_target", "make_target_shifted"))
    (project / "tiny_target.py").write_text(
        TARGET_MODULE + "\n\ndef make_target_shifted():\n    return make_target(shift=True)\n"
    )
    (project / "checks.yaml").write_text(CHECKS.replace("threshold: 0.5", "threshold: 0.9"))
    done = evalkit("gate", "--baseline", "base.json", "--junit", "j.xml", cwd=project)
    assert done.returncode == 1, done.stderr
    root = parse((project / "j.xml").read_text())
    failure = next(c for c in root.iter("testcase") if c.get("name") == "floor").find("failure")
    assert failure is not None
    assert "floor (recall@1): fail" in (failure.get("message") or "")
