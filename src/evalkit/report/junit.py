"""The gate as JUnit XML (``evalkit gate --junit``), for CI tools that show test reports."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final, Literal

from evalkit.gate.model import CheckVerdict, GateReport
from evalkit.gate.slices import SliceVerdict
from evalkit.report.slices import SLICE_WORDS
from evalkit.report.summary import interval, p_text, result, signed, status_word

Outcome = Literal["passed", "failure", "error", "skipped"]

# XML 1.0 has no way to write these characters, even escaped: a case id or a target's
# error message holding one would make the whole file unreadable.
_NOT_XML: Final = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(value: str) -> str:
    return _NOT_XML.sub("\ufffd", value)


@dataclass(frozen=True)
class JunitCase:
    """One testcase: what it is named, and what a CI page shows for it."""

    name: str
    outcome: Outcome
    kind: str  # the status the outcome stands for (``fail``, ``no-baseline``, ``regressed``...)
    message: str  # the verdict line
    detail: str  # the body of the element: why, coverage, the numbers


def check_outcome(v: CheckVerdict) -> Outcome:
    """Blocking: failure (error when the check could not be computed); not green: skipped."""
    if v.blocking:
        return "error" if v.status == "error" else "failure"
    return "passed" if v.status == "pass" else "skipped"


def slice_outcome(s: SliceVerdict, check: CheckVerdict) -> Outcome:
    """A regressed slice blocks as its check does (it is why the check failed)."""
    if s.status == "regressed":
        return "failure" if check.level == "block" else "skipped"
    return "passed" if s.status in ("improved", "no-change") else "skipped"


def _check_case(v: CheckVerdict) -> JunitCase:
    line = f"{v.check_id} ({v.metric}): {status_word(v)}: {result(v)}"
    detail = [v.message, f"coverage: {v.coverage}"]
    c = v.comparison
    if c is not None:
        detail.append(f"wins/losses/ties: {c.wins}/{c.losses}/{c.ties}")
        detail.extend(f"note: {w}" for w in c.warnings)
    return JunitCase(v.check_id, check_outcome(v), v.status, line, "\n".join(detail))


def _slice_case(s: SliceVerdict, check: CheckVerdict) -> JunitCase:
    line = f"{s.check_id} ({s.metric}) [{s.slice}]: {SLICE_WORDS[s.status]}"
    if s.delta is not None and s.ci_low is not None and s.ci_high is not None:
        line += f": Δ {signed(s.delta)} {interval(s.ci_low, s.ci_high, s.metric)}"
    if s.p_adjusted is not None:  # the slice table's p, as every report writes a p
        line += f", {p_text(s.p_adjusted, 'FDR-adjusted p')}"
    detail = f"{s.message}\n{s.n_paired} of {s.n_cases} case(s) paired".lstrip()
    return JunitCase(f"{s.check_id}[{s.slice}]", slice_outcome(s, check), s.status, line, detail)


def junit_cases(report: GateReport) -> Iterator[JunitCase]:
    """Every testcase of the gate: each check, then each slice of it when per_slice."""
    slices = report.slices.verdicts if report.slices is not None else ()
    for v in report.verdicts:
        yield _check_case(v)
        for s in slices:
            if s.check_id == v.check_id:
                yield _slice_case(s, v)
    if report.candidate.failed:
        failed = report.candidate.failed
        first_id, first_error = failed[0]
        yield JunitCase(
            "candidate run",
            "error",
            "error",
            f"{len(failed)} of {report.candidate.n_cases} case(s) of the candidate run failed",
            f"the first: {first_id}: {first_error}",
        )


def render_junit(report: GateReport, *, config_name: str) -> str:
    """The JUnit XML document of ``report`` (validated in tests against tests/data/junit.xsd)."""
    cases = list(junit_cases(report))
    counts = {o: sum(1 for c in cases if c.outcome == o) for o in ("failure", "error", "skipped")}
    totals = {
        "tests": str(len(cases)),
        "failures": str(counts["failure"]),
        "errors": str(counts["error"]),
        "time": "0",
    }
    root = ET.Element("testsuites", {"name": "evalkit", **totals})
    suite_name = _text(f"evalkit gate: {config_name}")
    suite = ET.SubElement(
        root, "testsuite", {"name": suite_name, **totals, "skipped": str(counts["skipped"])}
    )
    properties = ET.SubElement(suite, "properties")
    for name, value in _properties(report):
        ET.SubElement(properties, "property", {"name": name, "value": _text(value)})
    classname = _text(f"evalkit.{config_name}")
    for case in cases:
        element = ET.SubElement(
            suite, "testcase", {"name": _text(case.name), "classname": classname, "time": "0"}
        )
        if case.outcome == "passed":
            continue
        attributes = {"message": _text(case.message)}
        if case.outcome != "skipped":
            attributes["type"] = case.kind
        child = ET.SubElement(element, case.outcome, attributes)
        child.text = _text(case.detail)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def _properties(report: GateReport) -> Iterator[tuple[str, str]]:
    yield "verdict", report.verdict
    yield "exit_code", str(int(report.exit_code))
    yield "candidate", report.candidate.name
    if report.candidate.git_commit:
        yield "candidate_commit", report.candidate.git_commit
    if report.baseline is not None:
        yield "baseline", report.baseline.name
        if report.baseline.git_commit:
            yield "baseline_commit", report.baseline.git_commit
    if report.subset is not None:
        yield "subset", "decided on some cases only (-k/--case): not a pass of the whole set"
