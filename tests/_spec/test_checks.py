"""Checks files: every load-time rule, scoped selection, coverage and comparison."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalkit._model.results import CaseResult, QueryResult
from evalkit._spec.checks import (
    ChecksFile,
    CheckSpec,
    checks_from_data,
    load_checks,
    load_checks_file,
)
from evalkit.errors import CheckError
from evalkit.targets.base import TargetResponse

DATA = Path(__file__).parents[1] / "data" / "checks"
CONTROLS = ["cp-surry-any", "cp-newtown-pub", "cp-bondi-any"]


def write(tmp_path: Path, text: str, name: str = "checks.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def one_check(tmp_path: Path, body: str) -> Path:
    """A checks file holding one check whose keys are ``body`` (one key per line)."""
    lines = "\n".join(f"    {line}" for line in body.strip().splitlines())
    return write(tmp_path, f"checks:\n  - id: c1\n{lines}\n")


def rows(*ids: str, failed: tuple[str, ...] = ()) -> list[CaseResult]:
    return [
        CaseResult(i, TargetResponse([]), {"m": 1.0}, error="boom" if i in failed else None)
        for i in ids
    ]


# --------------------------------------------------------------------------- happy paths


def test_spec_example_loads() -> None:
    specs = load_checks(DATA / "checks.yaml")
    assert [s.id for s in specs] == [
        "recall_floor",
        "p95_ceiling",
        "no_ndcg_regression",
        "controls_hold",
        "no_unsupported_claims",
    ]
    floor, p95, regression, controls, claims = specs
    assert (floor.metric, floor.op, floor.threshold, floor.level) == (
        "recall@10",
        ">=",
        0.6,
        "block",
    )
    assert floor.alpha is None
    assert floor.method is None
    assert p95.threshold == 800.0
    assert isinstance(p95.threshold, float)
    assert p95.level == "warn"
    assert regression.vs_baseline == "no_significant_regression"
    assert regression.alpha == 0.05
    assert regression.method == "auto"  # the calibrated default (docs/calibration.md)
    assert regression.op is None
    assert controls.scope == tuple(CONTROLS)
    assert claims.threshold == 0.0


def test_kinds_and_blocking() -> None:
    floor, p95, regression, *_ = load_checks(DATA / "checks.yaml")
    assert floor.is_threshold
    assert not floor.is_vs_baseline
    assert regression.is_vs_baseline
    assert not regression.is_threshold
    assert floor.is_blocking
    assert not p95.is_blocking


def test_source_line_is_recorded_but_not_part_of_equality() -> None:
    specs = load_checks(DATA / "checks.yaml")
    assert specs[0].source == f"{DATA / 'checks.yaml'}:3"
    assert specs[1].source == f"{DATA / 'checks.yaml'}:8"
    assert dataclasses.replace(specs[0], source=None) == specs[0]


def test_file_wide_settings_and_optional_keys() -> None:
    checks_file = load_checks_file(DATA / "full.yaml")
    assert checks_file.correction == "holm"
    assert checks_file.require_baseline is True
    inferiority = checks_file.get("ndcg_not_worse")
    assert inferiority.vs_baseline == "non_inferiority"
    assert inferiority.margin == 0.01
    assert inferiority.method == "permutation"
    assert inferiority.alpha == 0.1
    assert inferiority.description is not None
    assert checks_file.get("error_rate").scope == ("1", "q2")  # integer ids read as their digits
    assert checks_file.ids() == ["ndcg_not_worse", "error_rate"]
    assert len(checks_file) == 2
    assert [c.id for c in checks_file] == checks_file.ids()


def test_file_wide_defaults() -> None:
    checks_file = load_checks_file(DATA / "checks.yaml")
    assert checks_file.correction == "none"
    assert checks_file.require_baseline is False
    assert list(checks_file.checks) == load_checks(DATA / "checks.yaml")


def test_known_case_ids_that_cover_the_scope_pass() -> None:
    specs = load_checks(DATA / "checks.yaml", known_case_ids=[*CONTROLS, "other"])
    assert len(specs) == 5


def test_metric_names_are_not_resolved_at_load(tmp_path: Path) -> None:
    path = one_check(tmp_path, "metric: registered_by_a_plugin_later@7\nop: '>='\nthreshold: 1")
    assert load_checks(path)[0].metric == "registered_by_a_plugin_later@7"


def test_checks_from_data_validates_parsed_config() -> None:
    data = {"checks": [{"id": "a", "metric": "m", "vs_baseline": "no_significant_regression"}]}
    checks_file = checks_from_data(data, source="evalkit.yaml#checks")
    assert checks_file.checks[0].alpha == 0.05
    with pytest.raises(CheckError, match=r"evalkit\.yaml#checks: zero checks declared"):
        checks_from_data({"checks": []}, source="evalkit.yaml#checks")


def test_get_unknown_check() -> None:
    with pytest.raises(CheckError, match="no check 'nope'; checks: recall_floor"):
        load_checks_file(DATA / "checks.yaml").get("nope")


# --------------------------------------------------------------------------- refused at load

CHECKS_TEXT = (DATA / "checks.yaml").read_text()
BASELINE = "metric: m\nvs_baseline: no_significant_regression"
FLOOR = "metric: m\nop: '>='\nthreshold: 1"


@pytest.mark.parametrize(
    ("body", "match"),
    [
        pytest.param(
            f"{FLOOR}\nvs_baseline: no_significant_regression",
            r"checks\.yaml:2: check 'c1': declares both threshold and vs_baseline",
            id="both-threshold-and-vs-baseline",
        ),
        pytest.param(
            "metric: m",
            r"checks\.yaml:2: check 'c1': declares neither threshold nor vs_baseline, "
            r"so it would gate nothing",
            id="neither-threshold-nor-vs-baseline",
        ),
        pytest.param("metric: m\nop: '>='", r"it has an op but no threshold", id="op-no-threshold"),
        pytest.param(
            "op: '>='\nthreshold: 1",
            r"checks\.yaml:2: check 'c1' has no 'metric'",
            id="missing-metric",
        ),
        pytest.param(
            "metric: recall@0\nop: '>='\nthreshold: 1",
            r"checks\.yaml:3: check 'c1': malformed metric spec 'recall@0'",
            id="malformed-metric-spec",
        ),
        pytest.param(
            f"{FLOOR}\nthreshold: 2",
            r"checks\.yaml:6: duplicate key 'threshold' \(first at line 5\)",
            id="duplicate-key-inside-a-check",
        ),
        # threshold rules
        pytest.param(
            f"{FLOOR}\nalpha: 0.05",
            r"checks\.yaml:6: check 'c1': alpha applies only to vs_baseline checks",
            id="alpha-on-a-threshold-check",
        ),
        pytest.param(
            f"{FLOOR}\nmethod: t",
            r"checks\.yaml:6: check 'c1': method applies only to vs_baseline",
            id="method-on-a-threshold-check",
        ),
        pytest.param(
            f"{FLOOR}\nmargin: 0.1",
            r"checks\.yaml:6: check 'c1': margin applies only to 'vs_baseline: non_inferiority'",
            id="margin-on-a-threshold-check",
        ),
        pytest.param(
            "metric: m\nthreshold: 1",
            r"check 'c1': a threshold check needs 'op', one of '<=', '>=', '=='",
            id="threshold-check-without-op",
        ),
        pytest.param(
            f"{FLOOR}\nlevel: error",
            r"checks\.yaml:6: check 'c1': unknown level 'error'; allowed: 'block', 'warn'",
            id="unknown-level",
        ),
        # vs_baseline rules
        pytest.param(
            "metric: m\nvs_baseline: no_significant_regresion",
            r"checks\.yaml:4: check 'c1': unknown vs_baseline 'no_significant_regresion'; "
            r"allowed: .* \(did you mean 'no_significant_regression'\?\)",
            id="unknown-vs-baseline-suggests",
        ),
        pytest.param(
            f"{BASELINE}\nop: '>='",
            r"checks\.yaml:5: check 'c1': op has no meaning on a vs_baseline check",
            id="op-on-a-vs-baseline-check",
        ),
        pytest.param(
            f"{BASELINE}\nmethod: wilcoxon",
            r"checks\.yaml:5: check 'c1': unknown method 'wilcoxon'; "
            r"allowed: 'auto', 'bootstrap', 'permutation', 't'",
            id="unknown-method",
        ),
        pytest.param(
            "metric: m\nvs_baseline: non_inferiority",
            r"checks\.yaml:4: check 'c1': 'vs_baseline: non_inferiority' needs 'margin'",
            id="non-inferiority-needs-a-margin",
        ),
        pytest.param(
            f"{BASELINE}\nmargin: 0.1",
            r"checks\.yaml:5: check 'c1': margin applies only to",
            id="margin-on-no-significant-regression",
        ),
        # scope
        pytest.param(
            f"{FLOOR}\nscope: []", r"checks\.yaml:6: check 'c1': scope is empty", id="empty-scope"
        ),
        pytest.param(
            f"{FLOOR}\nscope:",
            r"checks\.yaml:6: check 'c1': scope is empty",
            id="null-scope-is-empty-not-everything",
        ),
        pytest.param(
            f"{FLOOR}\nscope: [a, b, a]",
            r"checks\.yaml:6: check 'c1': scope names case 'a' twice",
            id="repeated-scope-id",
        ),
        pytest.param(
            f"{FLOOR}\nscope: a",
            r"checks\.yaml:6: check 'c1': scope must be a list of case ids, got str",
            id="scope-that-is-a-single-string",
        ),
        pytest.param(
            f"{FLOOR}\nscope: [a, 0x10]",
            r"checks\.yaml:6: check 'c1': scope id must be text: 0x10",
            id="scope-id-yaml-would-rewrite",
        ),
    ],
)
def test_a_check_is_refused_at_load_naming_its_line(tmp_path: Path, body: str, match: str) -> None:
    with pytest.raises(CheckError, match=match):
        load_checks(one_check(tmp_path, body))


@pytest.mark.parametrize(
    ("text", "match"),
    [
        pytest.param(
            "checks:\n  - id: a\n    metric: m\n    op: '>='\n    threshold: 1\n"
            "  - id: a\n    metric: n\n    op: '<='\n    threshold: 2\n",
            r"checks\.yaml:6: duplicate check id 'a' \(first at line 2\)",
            id="duplicate-check-id-names-both-lines",
        ),
        pytest.param(
            "checks:\n  - metric: m\n    op: '>='\n    threshold: 1\n",
            r"checks\.yaml:2: check #1 has no 'id'",
            id="missing-id",
        ),
        pytest.param(
            "checks:\n  - id: 010\n    metric: m\n    op: '>='\n    threshold: 1\n",
            r"checks\.yaml:2: check #1: id must be text: 010 is read by YAML",
            id="id-yaml-would-rewrite",
        ),
        pytest.param(
            "checks:\n  - recall@10 >= 0.6\n",
            r"checks\.yaml:2: check #1 must be a mapping with 'id' and 'metric', got str",
            id="check-that-is-not-a-mapping",
        ),
        pytest.param(
            '- id: a\n  metric: m\n  op: ">="\n  threshold: 0.5\n  levl: warn\n',
            r"checks\.yaml:5: check 'a': unknown key 'levl'",
            id="a-bare-list-still-names-the-line-of-a-bad-key",
        ),
        pytest.param(
            "checks:\n  a: 1\n",
            r"checks\.yaml:2: 'checks' must be a list of checks, got dict",
            id="checks-not-a-list",
        ),
        pytest.param(
            CHECKS_TEXT + "corection: holm\n",
            r"checks\.yaml:\d+: unknown top-level key 'corection' "
            r"\(did you mean 'correction'\?\)",
            id="unknown-top-level-key-suggests",
        ),
        pytest.param(
            "correction: bonferroni\n" + CHECKS_TEXT,
            r"checks\.yaml:1: unknown correction 'bonferroni'; allowed: 'none', 'holm', 'maxt'",
            id="unknown-correction",
        ),
        pytest.param(
            "require_baseline: 'yes'\n" + CHECKS_TEXT,
            r"checks\.yaml:1: require_baseline must be true or false, got 'yes'",
            id="require-baseline-must-be-boolean",
        ),
        pytest.param(
            "checks:\n  - id: a\n    metric: [m\n",
            r"checks\.yaml:4: invalid YAML: .*flow sequence",
            id="invalid-yaml-names-the-line",
        ),
    ],
)
def test_a_checks_file_is_refused_naming_its_line(tmp_path: Path, text: str, match: str) -> None:
    with pytest.raises(CheckError, match=match):
        load_checks(write(tmp_path, text))


# --------------------------------------------------------------------------- keys and ids


def test_unknown_key_suggests_the_closest_and_points_at_its_line(tmp_path: Path) -> None:
    path = one_check(tmp_path, "metric: recall@10\nop: '>='\ntreshold: 0.6")
    with pytest.raises(CheckError) as info:
        load_checks(path)
    message = str(info.value)
    assert message.startswith(f"{path}:5: check 'c1': unknown key 'treshold'")
    assert "(did you mean 'threshold'?)" in message
    assert "allowed: 'id', 'metric'" in message


def test_unknown_key_without_a_close_match(tmp_path: Path) -> None:
    path = one_check(tmp_path, "metric: m\nop: '>='\nthreshold: 1\nowner: search-team")
    with pytest.raises(CheckError) as info:
        load_checks(path)
    assert "unknown key 'owner'; allowed:" in str(info.value)
    assert "did you mean" not in str(info.value)


# --------------------------------------------------------------------------- zero checks, shape


@pytest.mark.parametrize(
    "text", ["", "# only a comment\n", "checks: []\n", "checks:\n", "correction: holm\n"]
)
def test_zero_checks(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(CheckError, match=r"checks\.yaml(:\d+)?: .*zero checks"):
        load_checks(path)


def test_a_bare_list_of_checks_loads_as_in_0_2_0(tmp_path: Path) -> None:
    path = write(tmp_path, '- id: a\n  metric: m\n  op: ">="\n  threshold: 0.5\n')
    (spec,) = load_checks(path)
    assert (spec.id, spec.op, spec.threshold) == ("a", ">=", 0.5)
    assert load_checks_file(path).correction == "none"


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CheckError, match=r"checks file not found: .*nope\.yaml"):
        load_checks(tmp_path / "nope.yaml")


def test_directory_instead_of_a_file(tmp_path: Path) -> None:
    with pytest.raises(CheckError, match=r"cannot read checks file"):
        load_checks(tmp_path)


# --------------------------------------------------------------------------- threshold rules


@pytest.mark.parametrize("op", ["'>'", "'=>'", "'!='", "gte"])
def test_unknown_op_lists_the_allowed(tmp_path: Path, op: str) -> None:
    path = one_check(tmp_path, f"metric: m\nop: {op}\nthreshold: 1")
    with pytest.raises(
        CheckError, match=r"checks\.yaml:4: check 'c1': unknown op .*; allowed: '<=', '>=', '=='"
    ):
        load_checks(path)


@pytest.mark.parametrize(
    ("literal", "shown"),
    [
        (".nan", "finite number, got nan"),
        (".inf", "finite number, got inf"),
        ("-.inf", "finite number, got -inf"),
        ("'0.6'", "number, got text '0.6' \\(write it without quotes\\)"),
        ("true", "number, got bool True"),
        ("[0.6]", "number, got list"),
    ],
)
def test_threshold_must_be_a_finite_number(tmp_path: Path, literal: str, shown: str) -> None:
    path = one_check(tmp_path, f"metric: m\nop: '>='\nthreshold: {literal}")
    with pytest.raises(
        CheckError, match=rf"checks\.yaml:5: check 'c1': threshold must be a {shown}"
    ):
        load_checks(path)


# --------------------------------------------------------------------------- vs_baseline rules


@pytest.mark.parametrize("alpha", ["0", "1", "1.5", "-0.1", "'0.05'", "true", ".nan"])
def test_alpha_must_lie_in_the_open_unit_interval(tmp_path: Path, alpha: str) -> None:
    path = one_check(tmp_path, f"metric: m\nvs_baseline: no_significant_regression\nalpha: {alpha}")
    with pytest.raises(CheckError, match=r"checks\.yaml:5: check 'c1': alpha must"):
        load_checks(path)


@pytest.mark.parametrize(
    ("margin", "problem"), [("0", "greater than 0"), ("-0.1", "greater than 0"), (".inf", "finite")]
)
def test_margin_must_be_positive_and_finite(tmp_path: Path, margin: str, problem: str) -> None:
    path = one_check(tmp_path, f"metric: m\nvs_baseline: non_inferiority\nmargin: {margin}")
    with pytest.raises(CheckError, match=rf"checks\.yaml:5: check 'c1': margin must .*{problem}"):
        load_checks(path)


# --------------------------------------------------------------------------- scope at load


def test_unknown_scope_id_has_the_spec_message_shape(tmp_path: Path) -> None:
    known = ["cp-surry-any", "cp-newtown-pub", "cp-bondi-any"]
    text = (DATA / "checks.yaml").read_text().replace("cp-newtown-pub,", "cp-newton-pub,")
    path = write(tmp_path, text)
    with pytest.raises(CheckError) as info:
        load_checks(path, known_case_ids=known)
    message = str(info.value)
    assert (
        "check 'controls_hold': scope names 1 case(s) that do not exist: cp-newton-pub" in message
    )
    assert message.startswith(f"{path}:21: ")
    assert "(did you mean 'cp-newtown-pub'?)" in message


def test_several_unknown_scope_ids_are_all_named() -> None:
    spec = CheckSpec("c", "m", op=">=", threshold=1.0, scope=("a", "zz1", "zz2"))
    with pytest.raises(CheckError, match="scope names 2 case\\(s\\) that do not exist: zz1, zz2"):
        spec.validate_scope(["a", "b"])


# --------------------------------------------------------------------------- select and coverage


def test_unscoped_select_returns_every_usable_row_in_order() -> None:
    spec = CheckSpec("all", "m", op=">=", threshold=0.5)
    got = spec.select(rows("a", "b", "c", failed=("b",)))
    assert [r.case_id for r in got] == ["a", "c"]
    assert spec.coverage(rows("a", "b", "c", failed=("b",))) == "2/3 cases"
    assert spec.missing(rows("a", "b", "c", failed=("b",))) == ["b"]


def test_scoped_select_returns_the_scoped_rows_in_run_order() -> None:
    spec = CheckSpec("controls_hold", "ndcg@3", op=">=", threshold=1.0, scope=tuple(CONTROLS))
    run_rows = rows("x", "cp-bondi-any", "cp-surry-any", "y", "cp-newtown-pub")
    got = [r.case_id for r in spec.select(run_rows)]
    assert got == ["cp-bondi-any", "cp-surry-any", "cp-newtown-pub"]
    assert spec.coverage(run_rows) == "3/3 cases"
    assert spec.coverage_counts(run_rows) == (3, 3)
    assert spec.missing(run_rows) == []


def test_scoped_case_without_a_row_raises_the_spec_message() -> None:
    spec = CheckSpec("controls_hold", "ndcg@3", op=">=", threshold=1.0, scope=tuple(CONTROLS))
    run_rows = rows("cp-surry-any", "cp-newtown-pub", "other")
    expected = (
        "check 'controls_hold': scoped to 3 case(s) but 1 produced no result: cp-bondi-any. "
        "A scoped check must evaluate every case it names — a floor checked on a subset is a "
        "floor that was not checked."
    )
    with pytest.raises(CheckError) as info:
        spec.select(run_rows)
    assert str(info.value) == expected
    assert spec.coverage(run_rows) == "2/3 cases"
    assert spec.missing(run_rows) == ["cp-bondi-any"]


def test_scoped_case_whose_row_errored_produced_no_result() -> None:
    spec = CheckSpec("controls_hold", "ndcg@3", op=">=", threshold=1.0, scope=tuple(CONTROLS))
    run_rows = rows(*CONTROLS, failed=("cp-surry-any", "cp-bondi-any"))
    with pytest.raises(CheckError, match="but 2 produced no result: cp-surry-any, cp-bondi-any\\."):
        spec.select(run_rows)
    assert spec.coverage(run_rows) == "1/3 cases"


def test_select_works_on_retrieval_rows() -> None:
    spec = CheckSpec("s", "recall@1", vs_baseline="no_significant_regression", scope=("q2",))
    query_rows = [
        QueryResult("q1", ["d"], {"recall@1": 1.0}),
        QueryResult("q2", [], {"recall@1": 0.0}),
    ]
    assert spec.select(query_rows) == [query_rows[1]]
    assert spec.coverage(query_rows) == "1/1 cases"


def test_select_refuses_duplicate_rows() -> None:
    spec = CheckSpec("s", "m", op=">=", threshold=0.0)
    with pytest.raises(CheckError, match="check 's': case 'a' has more than one row"):
        spec.select(rows("a", "b", "a"))


def test_coverage_of_an_empty_run() -> None:
    assert CheckSpec("s", "m", op=">=", threshold=0.0).coverage([]) == "0/0 cases"


# --------------------------------------------------------------------------- compare


def test_inequalities_are_exact_at_the_line() -> None:
    at_least = CheckSpec("f", "m", op=">=", threshold=0.6)
    assert at_least.compare(0.6)
    assert not at_least.compare(0.6 - 1e-15)
    at_most = CheckSpec("c", "m", op="<=", threshold=800)
    assert at_most.compare(800)
    assert not at_most.compare(800.0000001)


def test_equality_uses_the_fixed_tolerance() -> None:
    zero = CheckSpec("z", "m", op="==", threshold=0)
    assert zero.compare(1e-17)  # abs_tol is what lets == work against zero
    assert zero.compare(-1e-13)
    assert not zero.compare(1e-11)
    third = CheckSpec("t", "m", op="==", threshold=0.3)
    assert third.compare(0.1 + 0.2)
    big = CheckSpec("b", "m", op="==", threshold=1e6)
    assert big.compare(1e6 * (1 + 1e-10))
    assert not big.compare(1e6 * (1 + 1e-8))


def test_compare_accepts_numpy_numbers() -> None:
    spec = CheckSpec("f", "m", op=">=", threshold=1)
    assert spec.compare(np.float64(1.5))
    assert spec.compare(np.int64(1))


def test_compare_refuses_nan_and_non_numbers() -> None:
    spec = CheckSpec("f", "recall@10", op=">=", threshold=0.5)
    with pytest.raises(CheckError, match="check 'f': observed recall@10 is NaN"):
        spec.compare(float("nan"))
    with pytest.raises(CheckError, match="check 'f': observed value must be a number, got '0.7'"):
        spec.compare("0.7")  # type: ignore[arg-type]


def test_compare_on_a_vs_baseline_check() -> None:
    spec = CheckSpec("r", "m", vs_baseline="no_significant_regression")
    with pytest.raises(CheckError, match="check 'r': compare\\(\\) applies to threshold checks"):
        spec.compare(1.0)


# --------------------------------------------------------------------------- in code


def test_direct_construction_is_validated_too() -> None:
    with pytest.raises(CheckError, match="check 'x': declares both"):
        CheckSpec("x", "m", op=">=", threshold=1.0, vs_baseline="no_significant_regression")
    with pytest.raises(CheckError, match="check id must be a non-empty string"):
        CheckSpec("", "m", op=">=", threshold=1.0)
    spec = CheckSpec("x", "m", op=">=", threshold=1, scope=["a", "b"])  # type: ignore[arg-type]
    assert spec.scope == ("a", "b")
    assert spec.threshold == 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.threshold = 2.0  # type: ignore[misc]


def test_checks_file_in_code_refuses_empty_and_duplicates() -> None:
    a = CheckSpec("a", "m", op=">=", threshold=1.0)
    with pytest.raises(CheckError, match="zero checks declared"):
        ChecksFile(())
    with pytest.raises(CheckError, match="x.yaml: duplicate check id 'a'"):
        ChecksFile((a, a), source="x.yaml")
    with pytest.raises(CheckError, match="unknown correction 'bonf'"):
        ChecksFile((a,), correction="bonf")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- round trip

_ids = st.text(st.sampled_from("abcdefghijklmnop-_0123456789"), min_size=1, max_size=8)
_numbers = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e9, max_value=1e9)


@st.composite
def check_mappings(draw: st.DrawFn) -> list[dict[str, Any]]:
    ids = draw(st.lists(_ids, min_size=1, max_size=5, unique=True))
    out = []
    for check_id in ids:
        entry: dict[str, Any] = {
            "id": check_id,
            "metric": draw(st.sampled_from(["recall@10", "latency_p95", "x"])),
        }
        if draw(st.booleans()):
            entry["op"] = draw(st.sampled_from(["<=", ">=", "=="]))
            entry["threshold"] = draw(_numbers | st.integers(-1000, 1000))
        else:
            kind = draw(st.sampled_from(["no_significant_regression", "non_inferiority"]))
            entry["vs_baseline"] = kind
            entry["alpha"] = draw(st.floats(min_value=1e-6, max_value=0.999))
            entry["method"] = draw(st.sampled_from(["bootstrap", "permutation", "t"]))
            if kind == "non_inferiority":
                entry["margin"] = draw(st.floats(min_value=1e-9, max_value=10))
        entry["level"] = draw(st.sampled_from(["block", "warn"]))
        if draw(st.booleans()):
            entry["scope"] = draw(
                st.lists(_ids.map(lambda s: "c" + s), min_size=1, max_size=4, unique=True)
            )
        out.append(entry)
    return out


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(entries=check_mappings())
def test_yaml_round_trip(tmp_path: Path, entries: list[dict[str, Any]]) -> None:
    path = write(tmp_path, yaml.safe_dump({"checks": entries}))
    specs = load_checks(path)
    expected = []
    for entry in entries:
        kwargs: dict[str, Any] = {k: (tuple(v) if k == "scope" else v) for k, v in entry.items()}
        expected.append(CheckSpec(**kwargs))
    assert specs == expected
