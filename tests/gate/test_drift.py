"""Drift checks (issue #16): `vs_reference:` decided against the pinned reference.

The statistics are the vs_baseline evaluation's own (so they are tested by equality
with it, on many generated runs); what is new is tested here by construction: the
checks-file keys, the loud `no-reference`, `require_reference`, the one correction
family, goldens changed since the reference, failed reference cases, and the reports.
"""

from __future__ import annotations

import dataclasses
import json
import random
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from evalkit._app.reference_lookup import reference_from_fetch
from evalkit._spec.checks import ChecksFile, CheckSpec, load_checks_file
from evalkit._store.protocol import BaselineFetch
from evalkit.errors import CheckError, InputError
from evalkit.gate.model import CheckVerdict, GateOptions, GateReport
from evalkit.gate.procedure import evaluate_gate
from evalkit.gate.reference import NO_REFERENCE_GIVEN, Reference
from evalkit.report.html import render_html
from evalkit.report.json_report import dumps, render_json
from evalkit.report.markdown import render_markdown
from evalkit.report.terminal import render_terminal
from evalkit.stats.familywise import FamilywiseRate
from helpers.drift_runs import METRIC, Values, case_ids, run

FAST = GateOptions(n_resamples=2_000, seed=1)


def drift(mode: str = "no_significant_regression", **kw: Any) -> CheckSpec:
    return CheckSpec(id=kw.pop("id", "drift"), metric=METRIC, vs_reference=mode, **kw)  # type: ignore[arg-type]


def per_pr(mode: str = "no_significant_regression", **kw: Any) -> CheckSpec:
    return CheckSpec(id=kw.pop("id", "per_pr"), metric=METRIC, vs_baseline=mode, **kw)  # type: ignore[arg-type]


def values(
    n: int, shift: float, sd: float, seed: int, base: Values | None = None, *, exact: bool = False
) -> Values:
    """Per-case values: ``base`` (or fresh uniform ones) moved by ``shift`` ± N(0, sd).

    ``exact``: the noise is centred, so the mean move is exactly ``shift``.
    """
    rng = random.Random(seed)
    ids = case_ids(n)
    start = base or {cid: rng.uniform(0.3, 0.7) for cid in ids}
    noise = [rng.gauss(0.0, sd) for _ in ids]
    centre = sum(noise) / n if exact else 0.0
    return {cid: start[cid] + shift + e - centre for cid, e in zip(ids, noise, strict=True)}


def gate(
    checks: list[CheckSpec],
    candidate: Values,
    *,
    baseline: Values | None = None,
    reference: Reference | None = None,
    options: GateOptions = FAST,
) -> GateReport:
    base = None if baseline is None else run("base", baseline)
    return evaluate_gate(checks, run("cand", candidate), base, options, reference=reference)


def found(vals: Values, **kw: Any) -> Reference:
    return Reference.of(run("ref", vals, **kw), "pinned: 3 promotions ago")


# ------------------------------------------------------------------------- checks file


def write_checks(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "checks.yaml"
    path.write_text(body)
    return path


def test_the_checks_file_reads_both_drift_modes_and_require_reference(tmp_path: Path) -> None:
    path = write_checks(
        tmp_path,
        "require_reference: true\n"
        "correction: holm\n"
        "checks:\n"
        "  - id: slide\n"
        "    metric: ndcg@10\n"
        "    vs_reference: no_significant_regression\n"
        "    alpha: 0.1\n"
        "  - id: slide_ni\n"
        "    metric: ndcg@10\n"
        "    vs_reference: non_inferiority\n"
        "    margin: 0.02\n"
        "    method: t\n",
    )
    file = load_checks_file(path)
    assert file.require_reference is True
    assert file.require_baseline is False
    slide, slide_ni = file.checks
    assert (slide.vs_reference, slide.vs_baseline, slide.alpha) == (
        "no_significant_regression",
        None,
        0.1,
    )
    assert slide.is_vs_reference
    assert not slide.is_vs_baseline
    assert not slide.is_threshold
    assert slide_ni.mode == "non_inferiority"
    assert slide_ni.margin == 0.02
    assert slide_ni.alpha == 0.05  # the vs_baseline default, filled in the same way
    assert slide.describe() == (
        "slide: ndcg@10 vs_reference no_significant_regression (alpha=0.1) [block]"
    )


@pytest.mark.parametrize(
    ("check", "line", "needles"),
    [
        (
            "    vs_reference: no_significant_regression\n    vs_baseline: non_inferiority\n",
            2,
            ("declares both vs_baseline and vs_reference", "split it"),
        ),
        ("    vs_reference: non_inferiority\n", 4, ("'vs_reference: non_inferiority' needs",)),
        (
            "    vs_reference: no_significant_regresion\n",
            4,
            ("unknown vs_reference 'no_significant_regresion'", "did you mean"),
        ),
        (
            "    vs_reference: no_significant_regression\n    margin: 0.1\n",
            5,
            ("margin applies only to 'vs_reference: non_inferiority'",),
        ),
        (
            "    vs_reference: no_significant_regression\n    op: '>='\n",
            5,
            ("op has no meaning on a vs_reference check",),
        ),
        ("    vs_refrence: no_significant_regression\n", 4, ("did you mean 'vs_reference'",)),
    ],
)
def test_a_bad_drift_check_is_refused_at_its_line(
    tmp_path: Path, check: str, line: int, needles: tuple[str, ...]
) -> None:
    path = write_checks(tmp_path, "checks:\n  - id: c1\n    metric: ndcg@10\n" + check)
    with pytest.raises(CheckError) as caught:
        load_checks_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}: "), message
    for needle in needles:
        assert needle in message, message


def test_require_reference_must_be_a_boolean(tmp_path: Path) -> None:
    path = write_checks(
        tmp_path,
        "checks:\n  - {id: c, metric: m, vs_reference: no_significant_regression}\n"
        "require_reference: 'yes'\n",
    )
    with pytest.raises(CheckError, match=r"checks\.yaml:3: require_reference must be true"):
        load_checks_file(path)
    with pytest.raises(CheckError, match="require_reference must be true or false"):
        ChecksFile((drift(),), require_reference=1)  # type: ignore[arg-type]


# ------------------------------------------------------------------------- one evaluation


@pytest.mark.parametrize("seed", range(12))
def test_a_drift_verdict_is_the_vs_baseline_verdict_against_the_reference(seed: int) -> None:
    """One owner: the same numbers, status and message as vs_baseline with baseline=reference."""
    rng = random.Random(seed)
    n = rng.choice([12, 40, 150])
    ref = values(n, 0.0, 0.0, seed)
    cand = values(n, rng.choice([-0.05, -0.01, 0.0, 0.02]), rng.choice([0.02, 0.1]), seed + 99, ref)
    mode = rng.choice(["no_significant_regression", "non_inferiority"])
    kw: dict[str, Any] = {"method": rng.choice(["auto", "t", "bootstrap", "permutation"])}
    kw["alpha"] = rng.choice([0.05, 0.1])
    if mode == "non_inferiority":
        kw["margin"] = rng.choice([0.01, 0.05])
    changed = rng.sample(case_ids(n), k=n // 6)
    reference = Reference.of(run("ref", ref, changed=changed))
    as_drift = evaluate_gate(
        [drift(mode, **kw)], run("cand", cand), None, FAST, reference=reference
    )
    as_baseline = evaluate_gate(
        [per_pr(mode, **kw)], run("cand", cand), run("ref", ref, changed=changed), FAST
    )
    d, b = as_drift.verdicts[0], as_baseline.verdicts[0]
    assert d.kind == "vs_reference"
    assert b.kind == "vs_baseline"
    assert d.comparison == b.comparison
    assert (d.status, d.covered, d.total, d.worst_cases) == (
        b.status,
        b.covered,
        b.total,
        b.worst_cases,
    )
    assert d.message == b.message.replace("baseline", "reference")
    # the same rate; a check named for its near margin is named by its own id
    assert _unnamed(as_drift.familywise) == _unnamed(as_baseline.familywise)


def _unnamed(rate: FamilywiseRate | None) -> FamilywiseRate | None:
    if rate is None:
        return None
    return dataclasses.replace(rate, near_margin=tuple(("", r, w) for _, r, w in rate.near_margin))


def test_a_slide_the_per_pr_check_cannot_see_fails_the_drift_check() -> None:
    ref = values(200, 0.0, 0.0, 1)
    base = values(200, -0.04, 0.01, 2, ref)  # the last promotion: already 0.04 below
    cand = values(200, -0.001, 0.03, 3, base, exact=True)  # this PR: within noise of it
    report = gate([per_pr(), drift()], cand, baseline=base, reference=found(ref))
    step, slide = report.verdicts
    assert step.status == "pass"
    assert "no significant regression" in step.message
    assert slide.status == "fail"
    assert slide.kind == "vs_reference"
    assert "significant regression" in slide.message
    assert slide.comparison is not None
    assert slide.comparison.ci_high < 0
    assert slide.comparison.mde is not None  # the same power statement
    assert report.verdict == "fail"
    assert report.exit_code == 1
    assert report.n_vs_baseline_tests == 2
    assert report.reference is not None
    assert report.reference.comparable == 200


# ------------------------------------------------------------------------- no reference


@pytest.mark.parametrize(
    ("reference", "words"),
    [
        (None, ("missing", NO_REFERENCE_GIVEN)),
        (Reference("missing", None, "no promotion is pinned yet"), ("missing", "pinned yet")),
        (
            Reference("expired", None, "artifact 'evalkit-baseline' of abc1234 expired"),
            ("expired", "abc1234 expired"),
        ),
    ],
)
def test_no_reference_is_loud_and_never_a_pass(
    reference: Reference | None, words: tuple[str, ...]
) -> None:
    cand = values(30, 0.0, 0.05, 4)
    report = gate([drift(), per_pr()], cand, baseline=values(30, 0.0, 0.05, 5), reference=reference)
    v = report.verdicts[0]
    assert v.status == "no-reference"
    assert v.comparison is None
    assert not v.blocking
    for word in words:
        assert word in v.message
    assert "not a pass" in v.message
    assert report.verdicts[1].status == "pass"
    assert report.verdict == "warn"  # never green
    assert report.exit_code == 0
    assert report.reference is not None
    assert report.reference.status == words[0]
    assert report.n_vs_baseline_tests == 1


def test_require_reference_makes_no_reference_block_at_level_block_only() -> None:
    cand = values(30, 0.0, 0.05, 4)
    required = dataclasses.replace(FAST, require_reference=True)
    report = gate([drift(), drift(id="soft", level="warn")], cand, options=required)
    hard, soft = report.verdicts
    assert (hard.status, hard.required, hard.blocking) == ("no-reference", True, True)
    assert "require_reference is set, so this blocks" in hard.message
    assert (soft.status, soft.blocking) == ("no-reference", False)
    assert report.verdict == "fail"
    assert report.exit_code == 1
    assert [v.check_id for v in report.blocking_failures] == ["drift"]


def test_require_baseline_does_not_make_a_missing_reference_block() -> None:
    report = gate(
        [drift()],
        values(30, 0.0, 0.05, 4),
        options=dataclasses.replace(FAST, require_baseline=True),
    )
    assert report.verdicts[0].status == "no-reference"
    assert report.verdict == "warn"


def test_a_gate_without_drift_checks_has_no_reference_section() -> None:
    report = gate([per_pr()], values(20, 0.0, 0.05, 1), baseline=values(20, 0.0, 0.05, 2))
    assert report.reference is None
    assert render_json(report)["reference"] is None


def test_a_found_reference_needs_its_artefact_and_a_missing_one_has_none() -> None:
    with pytest.raises(InputError, match="needs its artefact"):
        Reference("found")
    with pytest.raises(InputError, match="cannot carry one"):
        Reference("expired", run("r", {"a": 1.0}))


def test_a_store_answer_becomes_the_reference(tmp_path: Path) -> None:
    from evalkit._spec.artifact import write_artifact

    art = run("ref", values(8, 0.0, 0.0, 1), sha="a" * 40)
    path = Path(write_artifact(art, tmp_path / "ref.json"))
    ref = reference_from_fetch(BaselineFetch("found", path, "branch", "pinned: v1.2", None))
    assert (ref.status, ref.source, ref.detail, ref.sha) == (
        "found",
        "branch",
        "pinned: v1.2",
        "a" * 40,
    )
    assert ref.artifact is not None
    assert ref.artifact.result.ids() == art.result.ids()
    gone = reference_from_fetch(BaselineFetch("expired", None, "artifact", "expired on 11-30"))
    assert (gone.status, gone.artifact, gone.detail) == ("expired", None, "expired on 11-30")


# ------------------------------------------------------------------------- goldens changed


def test_goldens_changed_since_the_reference_say_how_many_cases_remain_comparable() -> None:
    ids = case_ids(60)
    ref_values = values(60, 0.0, 0.0, 7)
    cand = values(60, -0.03, 0.01, 8, ref_values)
    changed = ids[:9]
    removed_from_ref = ids[50:]  # the reference predates 10 of today's cases
    ref_values = {c: v for c, v in ref_values.items() if c not in removed_from_ref}
    ref_values["gone-1"] = 0.5  # and had one case that is no longer a golden
    reference = Reference.of(run("ref", ref_values, changed=changed))
    report = gate([drift()], cand, reference=reference)
    v = report.verdicts[0]
    r = report.reference
    assert r is not None
    assert r.comparable == 60 - 9 - 10 == 41
    assert (len(r.goldens_diff.changed), len(r.goldens_diff.added), r.goldens_diff.removed) == (
        9,
        10,
        ("gone-1",),
    )
    assert (v.covered, v.total) == (41, 60)
    assert v.comparison is not None
    assert v.comparison.n_paired == 41
    assert "10 not in the reference, 9 with a changed golden: left out" in v.message
    assert v.status == "fail"
    note = next(n for n in report.notes if n.startswith("goldens changed since the reference"))
    assert "(10 added, 1 removed, 9 changed): 41 of 60 case(s) remain comparable" in note
    # the comparison is the one on the 41 comparable cases alone
    kept = {c: cand[c] for c in ids if c not in changed and c not in removed_from_ref}
    alone = gate(
        [drift()], kept, reference=Reference.of(run("ref", {c: ref_values[c] for c in kept}))
    )
    assert alone.verdicts[0].comparison is not None
    assert dataclasses.replace(v.comparison, deltas=()) == dataclasses.replace(
        alone.verdicts[0].comparison, deltas=()
    )


def test_every_case_changed_since_the_reference_is_no_reference_not_a_pass() -> None:
    ids = case_ids(10)
    ref = values(10, 0.0, 0.0, 1)
    report = gate([drift()], ref, reference=Reference.of(run("ref", ref, changed=ids)))
    v = report.verdicts[0]
    assert v.status == "no-reference"
    assert "none of the 10 case(s) in scope exist unchanged in the reference" in v.message
    assert report.verdict == "warn"
    required = dataclasses.replace(FAST, require_reference=True)
    blocked = gate(
        [drift()], ref, reference=Reference.of(run("ref", ref, changed=ids)), options=required
    )
    assert blocked.verdicts[0].blocking
    assert blocked.exit_code == 1


def test_failed_reference_cases_turn_a_drift_pass_into_a_warning() -> None:
    ids = case_ids(20)
    ref = values(20, 0.0, 0.0, 3)
    cand = values(20, 0.0, 0.01, 4, ref)
    ok = {c: v for c, v in ref.items() if c not in ids[:2]}
    reference = Reference.of(run("ref", ok, errors={ids[0]: "HTTP 503", ids[1]: "timeout"}))
    report = gate([drift()], cand, reference=reference)
    v = report.verdicts[0]
    assert v.status == "warn"
    assert (
        f"decided on 18 of 20 case(s); 2 reference case(s) failed: {ids[0]}, {ids[1]}" in v.message
    )
    assert "re-pin the reference" in v.message
    assert any("2 reference case(s) failed" in n for n in report.notes)


# ------------------------------------------------------------------------- one family


def test_drift_and_vs_baseline_checks_are_corrected_as_one_family() -> None:
    ref = values(80, 0.0, 0.0, 11)
    base = values(80, -0.01, 0.03, 12, ref)
    cand = values(80, -0.005, 0.03, 13, base)
    checks = [per_pr(), drift()]
    holm = dataclasses.replace(FAST, correction="holm")
    plain = gate(checks, cand, baseline=base, reference=found(ref))
    corrected = gate(checks, cand, baseline=base, reference=found(ref), options=holm)
    raw = sorted(v.comparison.p_value for v in plain.verdicts if v.comparison)
    adjusted = {v.check_id: v.comparison for v in corrected.verdicts if v.comparison}
    assert set(adjusted) == {"per_pr", "drift"}
    for c in adjusted.values():
        assert c.correction == "holm"
        assert c.p_adjusted is not None
    # Holm over the two: the smaller p doubled, the larger kept (each at least the one before)
    smallest = min(adjusted.values(), key=lambda c: c.p_value)
    assert smallest.p_adjusted == pytest.approx(min(1.0, 2 * raw[0]))
    assert corrected.n_vs_baseline_tests == 2


def test_maxt_falls_back_to_holm_when_drift_checks_pair_with_another_run() -> None:
    ref = values(40, 0.0, 0.0, 1)
    base = values(40, 0.0, 0.03, 2, ref)
    cand = values(40, 0.0, 0.03, 3, base)
    report = gate(
        [per_pr(), drift()],
        cand,
        baseline=base,
        reference=found(ref),
        options=dataclasses.replace(FAST, correction="maxt"),
    )
    assert any("Holm's correction was used instead" in n for n in report.notes)
    assert {v.comparison.correction for v in report.verdicts if v.comparison} == {"holm"}
    # the header names the correction that decided, not the one asked for (#23)
    assert report.correction == "holm"
    text = render_markdown(report, config_name="c")
    how = text.split("<summary>How the checks were decided</summary>", 1)[1]
    assert "correction: holm" in how.split("</details>", 1)[0]
    assert "correction: maxt" not in text


# ------------------------------------------------------------------------- reports


def _schema() -> dict[str, Any]:
    text = resources.files("evalkit.report").joinpath("gate-report.schema.json").read_text()
    schema: dict[str, Any] = json.loads(text)
    return schema


def _reports() -> dict[str, GateReport]:
    ref = values(40, 0.0, 0.0, 21)
    base = values(40, -0.05, 0.01, 22, ref)
    cand = values(40, 0.0, 0.01, 23, base)
    changed = case_ids(40)[:3]
    return {
        "found": gate(
            [per_pr(), drift()],
            cand,
            baseline=base,
            reference=Reference.of(run("ref", ref, changed=changed), "pinned: v1.4"),
        ),
        "missing": gate([per_pr(), drift()], cand, baseline=base),
        "required": gate(
            [drift()], cand, options=dataclasses.replace(FAST, require_reference=True)
        ),
    }


@pytest.mark.parametrize("name", ["found", "missing", "required"])
def test_drift_reports_validate_against_the_schema(name: str) -> None:
    data = json.loads(dumps(_reports()[name]))
    jsonschema.Draft202012Validator(_schema()).validate(data)
    drift_check = next(c for c in data["checks"] if c["id"] == "drift")
    assert drift_check["kind"] == "vs_reference"
    assert data["reference"]["status"] == ("found" if name == "found" else "missing")


def test_the_comment_shows_the_drift_check_beside_the_per_pr_check() -> None:
    reports = _reports()
    found_md = render_markdown(reports["found"], config_name="c")
    rows = [line for line in found_md.splitlines() if line.startswith("| ")]
    per_pr_row = next(r for r in rows if "per&#95;pr" in r)
    drift_row = next(r for r in rows if "| drift |" in r)
    # a failing drift row says what it compared with, before → after
    assert "| reference&nbsp;0.4793&nbsp;→&nbsp;0.4268: Δ&nbsp;-0.0525" in drift_row
    assert "reference" not in per_pr_row
    assert rows.index(drift_row) == rows.index(per_pr_row) + 1  # the same table, in file order
    assert "**Reference** ref · 40 cases" in found_md
    assert "pinned: v1.4" in found_md
    assert "37 of 40 case(s) remain comparable" in found_md
    missing_md = render_markdown(reports["missing"], config_name="c")
    assert "> [!WARNING]\n> **No reference (missing)**: " in missing_md
    assert "1 drift check could not run, which is not a pass" in missing_md
    assert "### ⚠️ WARN" in missing_md
    required_md = render_markdown(reports["required"], config_name="c")
    assert "> [!CAUTION]" in required_md
    assert "blocking failure" in required_md
    assert "no reference (blocking)" in required_md


def test_the_html_report_shows_the_reference_and_the_missing_one() -> None:
    reports = _reports()
    html = render_html(reports["found"])
    assert "<strong>Reference</strong> ref" in html
    assert "vs reference: " in html
    missing = render_html(reports["missing"])
    assert '<p class="alert"><strong>No reference (missing)</strong>' in missing
    assert 'class="badge no-reference"' in missing


def test_the_terminal_report_says_there_is_no_reference() -> None:
    from rich.console import Console

    console = Console(record=True, width=200, color_system=None)
    render_terminal(_reports()["missing"], console=console)
    text = console.export_text()
    assert "No reference (missing): no reference was given" in text
    assert "could not run, which is not a pass" in text


def test_hostile_reference_text_is_escaped_everywhere() -> None:
    hostile = "<script>alert(1)</script> @octocat #1 [x](http://e.vil)"
    report = gate(
        [drift()], values(10, 0.0, 0.01, 1), reference=Reference("expired", None, hostile)
    )
    md = render_markdown(report, config_name="c")
    html = render_html(report)
    assert "<script>" not in md
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    assert "@octocat" not in md  # md() defuses the mention
    vals = values(10, 0.0, 0.01, 1)
    named = gate([drift()], vals, reference=Reference.of(run(hostile, vals), hostile))
    for out in (render_markdown(named, config_name="c"), render_html(named)):
        assert "<script>" not in out
        assert "alert(1)" in out  # shown as text, not dropped


def test_a_verdict_built_in_code_defaults_to_not_required() -> None:
    v = CheckVerdict("x", "m", "vs_reference", "block", "no-reference", "none", 1, 1)
    assert not v.blocking
    assert dataclasses.replace(v, required=True).blocking


def test_a_reference_that_is_the_baseline_says_the_drift_check_repeats_it() -> None:
    base = values(20, 0.0, 0.0, 1)
    art = run("main", base)
    report = evaluate_gate(
        [per_pr(), drift()],
        run("cand", values(20, 0.0, 0.01, 2, base)),
        art,
        FAST,
        reference=Reference.of(art),
    )
    assert any("the reference is the current baseline" in n for n in report.notes)
    other = gate([per_pr(), drift()], base, baseline=base, reference=found(values(20, 0.0, 0.0, 3)))
    assert not any("the reference is the current baseline" in n for n in other.notes)
