"""`per_slice: true` and `slice: NAME` in the checks file (issue 28): refused at load when
they cannot mean anything, resolved against the goldens' slices otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit._app.pipeline import prepare
from evalkit._spec.checks import CheckSpec
from evalkit._spec.config import load_config
from evalkit.errors import CheckError
from helpers.slice_runs import write_project

GOLDENS = (
    '{"id": "a", "query": "alpha", "relevant": ["d1"], "tags": ["billing", "de"], "lang": "de"}\n'
    '{"id": "b", "query": "beta", "relevant": ["d3"], "tags": ["billing"], "lang": "en"}\n'
    '{"id": "c", "query": "gamma", "relevant": ["d2"], "tags": ["search"], "lang": "en"}\n'
)


def project(tmp_path: Path, check: str, slices: str = "slices: [tags, lang]") -> Path:
    return write_project(tmp_path, GOLDENS, f"checks:\n  - {check}\n", slices)


def test_slice_scope_resolves_to_the_slice_cases(tmp_path: Path) -> None:
    check = "{id: billing_floor, metric: recall@1, op: '>=', threshold: 0.5, slice: billing}"
    spec = prepare(load_config(project(tmp_path, check))).checks.checks[0]
    assert spec.scope == ("a", "b")
    assert spec.slice == "tags=billing"
    assert "over slice tags=billing (2 case(s))" in spec.describe()
    check = "{id: en, metric: recall@1, op: '>=', threshold: 0.5, slice: lang=en}"
    assert prepare(load_config(project(tmp_path, check))).checks.checks[0].scope == ("b", "c")


@pytest.mark.parametrize(
    ("check", "needle"),
    [
        ("{id: x, metric: recall@1, op: '>=', threshold: 0.5, slice: biling}", "did you mean"),
        ("{id: x, metric: recall@1, op: '>=', threshold: 0.5, slice: de}", "several dimensions"),
        (
            "{id: x, metric: recall@1, op: '>=', threshold: 0.5, slice: billing, scope: [a]}",
            "scope and slice together",
        ),
    ],
)
def test_slice_scope_refusals_name_the_check_line(tmp_path: Path, check: str, needle: str) -> None:
    with pytest.raises(CheckError) as err:
        prepare(load_config(project(tmp_path, check)))
    assert "checks.yaml:2" in str(err.value)
    assert needle in str(err.value)


def test_per_slice_without_declared_slices_points_at_the_config(tmp_path: Path) -> None:
    check = "{id: x, metric: recall@1, vs_baseline: no_significant_regression, per_slice: true}"
    config = project(tmp_path, check, slices="")
    with pytest.raises(CheckError, match=r"per_slice needs slice dimensions: declare them in"):
        prepare(load_config(config))


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        (
            {"op": ">=", "threshold": 0.5, "per_slice": True},
            "no_significant_regression' checks only",
        ),
        (
            {"vs_baseline": "non_inferiority", "margin": 0.1, "per_slice": True},
            "no_significant_regression' checks only",
        ),
        ({"vs_baseline": "no_significant_regression", "per_slice": "yes"}, "true or false"),
        (
            {"vs_baseline": "no_significant_regression", "per_slice": True, "slice": "billing"},
            "per_slice and slice together",
        ),
        ({"op": ">=", "threshold": 0.5, "slice": ""}, "must name one slice"),
    ],
)
def test_check_spec_refuses_meaningless_slice_settings(
    kwargs: dict[str, object], needle: str
) -> None:
    with pytest.raises(CheckError, match=needle):
        CheckSpec("x", "recall@1", **kwargs)  # type: ignore[arg-type]
