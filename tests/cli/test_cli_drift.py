"""`evalkit gate --reference PATH`: drift checks through the CLI (issue #16).

The six-case project of test_cli_gate_inputs, with a drift check added; the
reference is a real run artefact, edited where a test needs it to differ.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_cli_gate_inputs import _write_project, derive, refused
from test_cli_gate_inputs import made as made  # the module-scoped run fixture

from helpers.cli import evalkit
from helpers.tiny_project import CHECKS, one_line_error

DRIFT = (
    CHECKS + "  - id: no_drift\n    metric: ndcg@10\n    vs_reference: no_significant_regression\n"
)
AGAINST_REF = ("gate", "--candidate", "full.json", "--reference", "ref.json", "--json", "r.json")


@pytest.fixture
def project(tmp_path: Path, made: Path) -> Path:
    _write_project(tmp_path)
    (tmp_path / "checks.yaml").write_text(DRIFT)
    (tmp_path / "full.json").write_bytes(made.read_bytes())
    return tmp_path


def refused_reference(project: Path, reference: str, needles: tuple[str, ...]) -> None:
    """The gate on full.json with this --reference is refused naming what is wrong."""
    refused(project, "gate", "--candidate", "full.json", "--reference", reference, needles=needles)


def report(project: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((project / "r.json").read_text())
    return data


def verdict(data: dict[str, Any], check_id: str) -> dict[str, Any]:
    return next(c for c in data["checks"] if c["id"] == check_id)


def lower(doc: dict[str, Any]) -> None:
    """A run whose ndcg@10 is lower on every case (still in [0, 1]): set against the made
    run as its reference, it slid."""
    for row in doc["rows"]:
        row["metrics"]["ndcg@10"] = row["metrics"]["ndcg@10"] - 0.3 - 0.01 * len(row["id"])


SLID_AGAINST_REF = (
    "gate", "--candidate", "slid.json", "--reference", "ref.json", "--json", "r.json"
)  # fmt: skip


def test_a_reference_file_decides_the_drift_check(project: Path) -> None:
    derive(project, "ref.json", lambda d: None)
    same = evalkit(*AGAINST_REF, cwd=project)
    assert same.returncode == 0, same.stdout + same.stderr
    data = report(project)
    v = verdict(data, "no_drift")
    assert (v["kind"], v["status"]) == ("vs_reference", "pass")
    assert data["reference"]["status"] == "found"
    assert data["reference"]["detail"] == "reference ref.json"
    assert "Reference " in same.stdout

    derive(project, "slid.json", lower)
    slid = evalkit(*SLID_AGAINST_REF, cwd=project)
    assert slid.returncode == 1, slid.stdout + slid.stderr
    v = verdict(report(project), "no_drift")
    assert v["status"] == "fail"
    assert "significant regression" in v["message"]


def test_no_reference_is_a_loud_warning_and_require_reference_blocks(project: Path) -> None:
    result = evalkit("gate", "--candidate", "full.json", "--json", "r.json", cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    data = report(project)
    assert data["verdict"] == "warn"
    assert verdict(data, "no_drift")["status"] == "no-reference"
    assert data["reference"]["status"] == "missing"
    assert "No reference (missing)" in result.stdout
    required = evalkit(
        "gate", "--candidate", "full.json", "--require-reference", "--json", "r.json", cwd=project
    )
    assert required.returncode == 1, required.stdout + required.stderr
    assert report(project)["summary"]["blocking_failures"] == ["no_drift"]
    (project / "checks.yaml").write_text("require_reference: true\n" + DRIFT)
    from_file = evalkit("gate", "--candidate", "full.json", cwd=project)
    assert from_file.returncode == 1, from_file.stdout + from_file.stderr


def test_require_reference_in_evalkit_yaml_makes_no_reference_block(project: Path) -> None:
    config = project / "evalkit.yaml"
    config.write_text(config.read_text() + "require_reference: true\n")
    blocked = evalkit("gate", "--candidate", "full.json", "--json", "r.json", cwd=project)
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    data = report(project)
    assert verdict(data, "no_drift")["status"] == "no-reference"
    assert data["summary"]["blocking_failures"] == ["no_drift"]
    # like require_baseline it is a boolean, named with its line when it is not
    config.write_text(config.read_text().replace("require_reference: true", "require_reference: 1"))
    bad = evalkit("gate", "--candidate", "full.json", cwd=project)
    assert bad.returncode == 2, bad.stdout + bad.stderr
    assert "require_reference" in bad.stderr


def test_a_reference_no_check_uses_is_refused(project: Path) -> None:
    (project / "checks.yaml").write_text(CHECKS)
    derive(project, "ref.json", lambda d: None)
    refused_reference(
        project,
        "ref.json",
        ("reference ref.json", "no check compares with the reference", "vs_reference"),
    )


def test_the_candidate_as_its_own_reference_is_refused(project: Path) -> None:
    refused_reference(project, "./full.json", ("the reference full.json is the candidate itself",))


def test_a_reference_sharing_no_case_is_refused_naming_the_reference(project: Path) -> None:
    def other_set(doc: dict[str, Any]) -> None:
        for row in doc["rows"]:
            row["id"] = "x-" + row["id"]
        doc["goldens"]["cases"] = {"x-" + k: v for k, v in doc["goldens"]["cases"].items()}

    derive(project, "ref.json", other_set)
    refused_reference(
        project, "ref.json", ("ref.json", "no_drift", "the reference shares none of the 6 case(s)")
    )


def test_a_missing_reference_file_is_an_input_error(project: Path) -> None:
    result = evalkit("gate", "--candidate", "full.json", "--reference", "nope.json", cwd=project)
    one_line_error(result, 2, "nope.json")


def test_the_pinned_reference_is_used_until_re_pinned(project: Path) -> None:
    config = project / "evalkit.yaml"
    config.write_text(config.read_text() + "baseline: {path: base.json}\n")
    derive(project, "slid.json", lower)  # full.json is the older, better promotion
    for promoted in ("full.json", "slid.json"):
        done = evalkit("promote", promoted, cwd=project)
        assert done.returncode == 0, done.stderr
    pinned = evalkit("pin", "1 promotions ago", cwd=project)
    assert pinned.returncode == 0, pinned.stdout + pinned.stderr
    result = evalkit(
        "gate", "--candidate", "slid.json", "--json", "r.json", "--html", "r.html", cwd=project
    )
    assert result.returncode == 1, result.stdout + result.stderr
    page = (project / "r.html").read_text()
    trend = page.split('<svg class="trend"', 1)[1].split("</svg>", 1)[0]
    assert trend.count("<circle") == 3  # two promotions, then the candidate
    assert 'class="candidate"' in trend
    assert 'class="reference"' in trend  # the pinned promotion's level
    data = report(project)
    assert verdict(data, "no_regression")["status"] == "pass"  # the last promotion: no change
    assert verdict(data, "no_drift")["status"] == "fail"  # the pinned one: a slide
    assert data["reference"]["status"] == "found"
    assert data["reference"]["source"] == "file"
    assert "Reference " in result.stdout
    # re-pinned to the last promotion, the same candidate no longer slid from it
    repinned = evalkit("pin", "0 promotions ago", cwd=project)
    assert repinned.returncode == 0, repinned.stdout + repinned.stderr
    after = evalkit("gate", "--candidate", "slid.json", "--json", "r.json", cwd=project)
    assert after.returncode == 0, after.stdout + after.stderr
    assert verdict(report(project), "no_drift")["status"] == "pass"
    # an explicit --reference wins over the pin
    derive(project, "ref.json", lambda d: None)
    again = evalkit(*SLID_AGAINST_REF, cwd=project)
    assert again.returncode == 1, again.stdout + again.stderr
    assert verdict(report(project), "no_drift")["status"] == "fail"
    assert report(project)["reference"]["detail"] == "reference ref.json"


def test_without_a_pin_the_file_store_says_how_to_pin(project: Path) -> None:
    config = project / "evalkit.yaml"
    config.write_text(config.read_text() + "baseline: {path: base.json}\n")
    assert evalkit("promote", "full.json", cwd=project).returncode == 0
    result = evalkit("gate", "--candidate", "full.json", "--json", "r.json", cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    data = report(project)
    assert verdict(data, "no_drift")["status"] == "no-reference"
    assert data["verdict"] == "warn"
    assert "evalkit pin" in verdict(data, "no_drift")["message"]


def test_the_trend_reuses_the_gates_store_and_checks(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The HTML report's trend reads the promotions from the store the gate opened for its
    # baseline and reference, with the drift checks the gate decided: nothing is reopened.
    import evalkit._spec.checks as checks_module
    import evalkit.github.stores as stores_module

    config = project / "evalkit.yaml"
    config.write_text(config.read_text() + "baseline: {path: base.json}\n")
    derive(project, "older.json", lower)
    for promoted in ("older.json", "full.json"):
        assert evalkit("promote", promoted, cwd=project).returncode == 0
    assert evalkit("pin", "1 promotions ago", cwd=project).returncode == 0
    calls: list[str] = []
    for module, name in ((stores_module, "open_store"), (checks_module, "load_checks_file")):
        real = getattr(module, name)

        def counted(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
            calls.append(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)
    result = evalkit("gate", "--candidate", "full.json", "--html", "r.html", cwd=project)
    # the pinned reference (older.json) is lower on every case: the drift check passes
    assert result.returncode == 0, result.stdout + result.stderr
    assert '<svg class="trend"' in (project / "r.html").read_text()
    assert sorted(calls) == ["load_checks_file", "open_store"]
