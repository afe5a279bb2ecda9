"""The JSON report: schema-valid, stable keys, every verdict field, never NaN."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from evalkit.gate.model import CheckVerdict, Comparison, StoppedEarly
from evalkit.report.json_report import dumps, render_json

from .samples import SCENARIOS, failing, hostile

DOC = Path(__file__).parents[2] / "docs" / "report-schema.md"


def _schema() -> dict[str, Any]:
    text = resources.files("evalkit.report").joinpath("gate-report.schema.json").read_text()
    schema: dict[str, Any] = json.loads(text)
    return schema


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_scenario_validates_against_the_schema(name: str) -> None:
    data = json.loads(dumps(SCENARIOS[name]()))
    jsonschema.Draft202012Validator(_schema()).validate(data)


def test_schema_rejects_an_unknown_key() -> None:
    """additionalProperties is closed, so the schema cannot silently lag the code."""
    data = render_json(failing())
    data["checks"][0]["surprise"] = 1
    with pytest.raises(jsonschema.ValidationError, match="surprise"):
        jsonschema.Draft202012Validator(_schema()).validate(data)


def test_schema_version_comes_first_and_keys_are_stable() -> None:
    data = render_json(failing())
    assert next(iter(data)) == "schema_version"
    assert data["schema_version"] == 1
    assert list(data) == [
        "schema_version", "kind", "verdict", "exit_code", "summary", "subset", "stopped_early",
        "candidate", "baseline", "reference", "goldens_diff", "multiplicity", "notes",
        "non_finite", "checks",
    ]  # fmt: skip
    assert dumps(failing()) == dumps(failing())


def test_every_verdict_field_is_carried() -> None:
    report = failing()
    data = render_json(report)
    assert data["verdict"] == "fail"
    assert data["exit_code"] == 1
    assert data["summary"]["blocking_failures"] == ["recall_floor", "no_ndcg_regression"]
    assert data["summary"]["by_status"] == {"fail": 2, "pass": 1}
    check = data["checks"][1]
    v = report.verdicts[1]
    assert v.comparison is not None
    inside_coverage = {"covered", "total", "counts"}
    for f in dataclasses.fields(CheckVerdict):
        key = "coverage" if f.name in inside_coverage else {"check_id": "id"}.get(f.name, f.name)
        assert key in check, f.name
    for f in dataclasses.fields(Comparison):
        assert f.name in check["comparison"], f.name
    assert check["coverage"] == {"covered": 100, "total": 100}
    assert check["comparison"]["ci_low"] == -0.065
    assert len(check["comparison"]["deltas"]) == 100
    assert check["worst_cases"][0] == {
        "case_id": "q0068",
        "baseline": 0.423,
        "candidate": 0.1449,
        "delta": -0.2781,
    }
    assert data["multiplicity"]["alpha_familywise"] == pytest.approx(1 - 0.95**2)


def test_non_finite_values_become_null_and_are_listed() -> None:
    report = failing()
    v = report.verdicts[1]
    assert v.comparison is not None
    comp = dataclasses.replace(v.comparison, ci_high=math.inf, mde=math.nan)
    report = dataclasses.replace(
        report, verdicts=(report.verdicts[0], dataclasses.replace(v, comparison=comp))
    )
    text = dumps(report)

    def refuse(const: str) -> None:
        raise AssertionError(f"{const} emitted")

    data = json.loads(text, parse_constant=refuse)
    assert data["checks"][1]["comparison"]["ci_high"] is None
    assert data["checks"][1]["comparison"]["mde"] is None
    assert data["non_finite"] == ["checks[1].comparison.ci_high", "checks[1].comparison.mde"]


def test_every_non_finite_float_field_is_listed() -> None:
    """The list comes from the records' float fields, not a hand-kept list of names: the
    candidate's value, min_effect, the tested value, the bootstrap interval and the costs
    (a target's huge per-case costs sum to inf) are listed too when they are not finite."""
    report = failing()
    v = report.verdicts[1]
    assert v.comparison is not None
    comp = dataclasses.replace(
        v.comparison,
        candidate_value=math.nan,
        min_effect=math.inf,
        tested_value=-math.inf,
        bootstrap_ci=(0.0, math.inf, 0.95),
    )
    report = dataclasses.replace(
        report,
        verdicts=(report.verdicts[0], dataclasses.replace(v, comparison=comp)),
        stopped_early=StoppedEarly(3, 10, "budget", False, math.inf, math.inf),
    )
    data = json.loads(dumps(report))
    assert data["stopped_early"]["cost_usd"] is None
    assert data["checks"][1]["comparison"]["bootstrap_ci"]["high"] is None
    assert sorted(data["non_finite"]) == [
        "checks[1].comparison.bootstrap_ci.high",
        "checks[1].comparison.candidate_value",
        "checks[1].comparison.min_effect",
        "checks[1].comparison.tested_value",
        "stopped_early.cost_usd",
        "stopped_early.cost_usd_estimated_full",
    ]


def test_hostile_text_round_trips_exactly() -> None:
    report = hostile()
    data = json.loads(dumps(report))
    assert data["checks"][0]["id"] == report.verdicts[0].check_id
    assert data["candidate"]["failed"][0]["error"] == report.candidate.failed[0][1]
    assert dumps(report).isascii()


def test_docs_describe_every_schema_field() -> None:
    """docs/report-schema.md names every property the schema defines."""
    doc = DOC.read_text(encoding="utf-8")
    documented = set(re.findall(r"`([a-z_]+)`", doc))
    names: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            names.update(node.get("properties", {}))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(_schema())
    assert names - documented == set()


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_c_encoded_layout_holds_what_json_dumps_indent_2_held(name: str) -> None:
    # dumps lays the report out itself, each flat object on one line, to stay on json's C
    # encoder (#27); the document must be the very one json.dumps(indent=2) wrote.
    report = SCENARIOS[name]()
    text = dumps(report)
    assert json.loads(text) == json.loads(json.dumps(render_json(report), indent=2))
    assert json.loads(dumps(report, indent=None)) == json.loads(text)
    assert text.endswith("}\n")
    assert text.isascii()


def test_each_case_delta_is_one_line_under_its_indented_outline() -> None:
    report = failing()
    lines = dumps(report).splitlines()
    assert lines[:2] == ["{", '  "schema_version": 1,']
    deltas = [line for line in lines if line.lstrip().startswith('{"case_id": ')]
    shown = sum(
        len(c["comparison"]["deltas"]) + len(c["worst_cases"])
        for c in render_json(report)["checks"]
        if c["comparison"] is not None
    )
    assert shown > 0
    assert len(deltas) == shown
    assert all(
        json.loads(line.rstrip(",")).keys() == {"case_id", "baseline", "candidate", "delta"}
        for line in deltas
    )


@pytest.mark.parametrize(
    ("where", "value", "named"),
    [
        ("deltas", math.nan, True),
        ("deltas", -math.inf, True),
        ("worst_cases", math.inf, True),
        # Finite values whose sum overflows: the quick all-finite test must not list them.
        ("deltas", 1.7e308, False),
        ("worst_cases", -1.7e308, False),
    ],
)
def test_a_per_case_value_is_listed_exactly_when_it_is_not_finite(
    where: str, value: float, named: bool
) -> None:
    report = failing()
    v = report.verdicts[1]
    assert v.comparison is not None
    assert v.comparison.deltas
    rows = list(v.comparison.deltas if where == "deltas" else v.worst_cases or v.comparison.deltas)
    rows[0] = dataclasses.replace(rows[0], candidate=value)
    rows[-1] = dataclasses.replace(rows[-1], baseline=value)
    if where == "deltas":
        v = dataclasses.replace(v, comparison=dataclasses.replace(v.comparison, deltas=tuple(rows)))
    else:
        v = dataclasses.replace(v, worst_cases=tuple(rows))
    report = dataclasses.replace(report, verdicts=(report.verdicts[0], v))
    listed = render_json(report)["non_finite"]
    prefix = "checks[1].comparison.deltas" if where == "deltas" else "checks[1].worst_cases"
    expected = [f"{prefix}[0].candidate", f"{prefix}[{len(rows) - 1}].baseline"]
    assert listed == (expected if named else [])
