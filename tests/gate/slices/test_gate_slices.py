"""Per-slice checks in the gate (issue 28): the aggregate passes, one slice fails."""

from __future__ import annotations

from dataclasses import replace

from evalkit._spec.checks import CheckSpec
from evalkit.gate.model import GateOptions
from evalkit.gate.procedure import evaluate_gate
from evalkit.gate.slices import SliceSettings, SliceTest, slice_family
from helpers.slice_runs import METRIC, artefact, assignment, story

AGGREGATE = CheckSpec("overall", METRIC, vs_baseline="no_significant_regression")
PER_SLICE = CheckSpec("by_slice", METRIC, vs_baseline="no_significant_regression", per_slice=True)
OPTIONS = GateOptions(n_resamples=500, seed=1)


def test_aggregate_passes_while_the_regressed_slice_fails_and_is_named() -> None:
    cand, base, _ = story()
    report = evaluate_gate([AGGREGATE, PER_SLICE], cand, base, OPTIONS)
    overall, by_slice = report.verdicts
    assert overall.status == "pass"
    assert by_slice.status == "fail"
    assert "tags=billing" in by_slice.message
    assert "tags=search" not in by_slice.message.split("regressed significantly")[1]
    assert report.slices is not None
    statuses = {v.slice: v.status for v in report.slices.verdicts}
    assert statuses["tags=billing"] == "regressed"
    assert statuses["tags=search"] == "improved"
    assert statuses["tags=rare"] == "too-small"  # 6 cases < 30
    # a slice none of whose cases is in the baseline is reported, never dropped
    assert statuses["tags=new"] == "no-baseline"
    # tested slices share cases (long overlaps both): dependent, so Benjamini-Yekutieli
    assert report.slices.method == "by"


def test_slice_interval_adjusted_p_and_status_agree() -> None:
    cand, base, _ = story()
    report = evaluate_gate([PER_SLICE], cand, base, OPTIONS)
    assert report.slices is not None
    for v in report.slices.verdicts:
        if not v.tested:
            continue
        assert v.ci_low is not None
        assert v.ci_high is not None
        assert v.p_adjusted is not None
        assert v.p_value is not None
        assert (v.status == "regressed") == (v.ci_high < 0) == (v.p_adjusted <= report.slices.q)
        assert (v.p_value <= report.slices.level) == (v.status == "regressed")
        assert v.confidence is not None
        assert abs(v.confidence - (1 - 2 * report.slices.level)) < 1e-12


def test_disjoint_slices_use_benjamini_hochberg_and_the_setting_is_obeyed() -> None:
    cand, base, slices = story()
    disjoint = assignment(
        {
            cid: [t for t in v["tags"] if t not in ("long", "rare")]
            for cid, v in slices.members.items()
        }
    )
    assert cand.goldens is not None
    cand = replace(cand, goldens=replace(cand.goldens, slices=disjoint))
    report = evaluate_gate([PER_SLICE], cand, base, OPTIONS)
    assert report.slices is not None
    assert report.slices.method == "bh"
    assert "independent" in report.slices.why
    forced = replace(OPTIONS, slices=SliceSettings(method="by", min_cases=5))
    report = evaluate_gate([PER_SLICE], cand, base, forced)
    assert report.slices is not None
    assert report.slices.method == "by"


def test_a_baseline_without_slices_pairs_by_case_id() -> None:
    cand, base, _ = story()
    assert base.goldens is not None
    assert base.goldens.slices is None
    report = evaluate_gate([PER_SLICE], cand, base, OPTIONS)
    assert report.slices is not None
    billing = next(v for v in report.slices.verdicts if v.slice == "tags=billing")
    assert billing.n_paired == 40


def test_familywise_sentence_adds_the_slice_rate() -> None:
    cand, base, _ = story()
    plain = evaluate_gate([AGGREGATE], cand, base, OPTIONS)
    sliced = evaluate_gate([AGGREGATE, PER_SLICE], cand, base, OPTIONS)
    assert plain.alpha_familywise is not None
    assert sliced.familywise is not None
    assert sliced.familywise.checks_rate is not None
    assert sliced.alpha_familywise == min(1.0, sliced.familywise.checks_rate + 0.05)
    text = sliced.familywise.describe("none")
    assert "q = 5% for the per-slice tests" in text
    assert "Benjamini-Yekutieli" in text


def test_no_slices_recorded_means_no_slice_report() -> None:
    cand, base, _ = story()
    assert cand.goldens is not None
    bare = replace(cand, goldens=replace(cand.goldens, slices=None))
    report = evaluate_gate([PER_SLICE], bare, base, OPTIONS)
    assert report.slices is None


def test_slice_family_figures_are_the_gate_procedure_on_the_slice_cases() -> None:
    """A slice's Δ and p are what the gate's own check computes on those cases alone."""
    cand, base, slices = story()
    report = evaluate_gate([PER_SLICE], cand, base, OPTIONS)
    assert report.slices is not None
    billing = next(v for v in report.slices.verdicts if v.slice == "tags=billing")
    ids = set(slices.cases_of(next(k for k in slices.slices() if str(k) == "tags=billing")))
    only = {r.case_id: r.metrics[METRIC] for r in cand.result.per_query if r.case_id in ids}
    old = {r.case_id: r.metrics[METRIC] for r in base.result.per_query if r.case_id in ids}
    scoped = evaluate_gate(
        [CheckSpec("scoped", METRIC, vs_baseline="no_significant_regression")],
        artefact("c", only),
        artefact("b", old),
        OPTIONS,
    )
    comparison = scoped.verdicts[0].comparison
    assert comparison is not None
    assert billing.delta == comparison.delta
    assert billing.p_value == comparison.p_value / 2  # one-sided on the bad side
    test = SliceTest("x", METRIC, True, cand.result, base.result, tuple(cand.result.ids()))
    alone = slice_family([test], slices, SliceSettings(), n_resamples=500, seed=1)
    assert [v.delta for v in alone.verdicts] == [v.delta for v in report.slices.verdicts]


def test_a_case_that_moved_slice_is_noted_and_still_compared() -> None:
    cand, base, slices = story()
    moved = dict(slices.members)
    moved["c000"] = {"tags": ("search",)}  # was billing, long
    assert cand.goldens is not None
    assert base.goldens is not None
    base = replace(base, goldens=replace(base.goldens, slices=slices))
    cand = replace(cand, goldens=replace(cand.goldens, slices=replace(slices, members=moved)))
    report = evaluate_gate([PER_SLICE], cand, base, OPTIONS)
    assert report.goldens_diff.reassigned == ("c000",)
    assert report.goldens_diff.changed == ()
    assert any("1 case(s) moved to other slices since the baseline" in n for n in report.notes)
    assert report.slices is not None
    billing = next(v for v in report.slices.verdicts if v.slice == "tags=billing")
    assert billing.n_paired == 39  # the current assignment decides
