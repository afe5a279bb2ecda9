"""The family-wise sentence of the gate's header, held to the gate itself by simulation.

Every report says "if nothing had changed, the chance that at least one of them fails
falsely is about X%".  Here nothing changes by construction: candidate, baseline and
reference draw each case's value around the same per-case level, so every true
difference is 0.  Each trial runs the real gate (``evaluate_gate``, default method) on
fresh data with every check kind -- a threshold check (not a test: it must not count),
``no_significant_regression`` on a higher- and a lower-is-better metric,
``non_inferiority`` with a margin at which it fails fairly often even with nothing
changed, and a drift check against the reference -- under each correction, and counts
the trials in which at least one tested check failed.  That share must match the rate
the same gates printed, within binomial error.  (The old header inverted the
non-inferiority line and printed 95.8% for the quick start.)

The printed figure is a plug-in estimate from each gate's own sample covariance, so it
scatters from gate to gate; it is compared as a mean over the gates, with a small
allowance for that scatter's bias (the rate is convex in the estimated spread).

``EVALKIT_FAMILYWISE_TRIALS=2000 uv run pytest -m slow -rP``
``tests/stats/test_familywise_gate.py`` prints the table quoted in
docs/design/statistics.md (``-rP``: the workers' ``-s`` output is not relayed).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass

import numpy as np
import pytest

from evalkit import CaseResult, RunResult, TargetResponse, register_metric
from evalkit._spec.artifact import GoldensInfo, RunArtifact, build_artifact
from evalkit._spec.checks import CheckSpec
from evalkit._util.pvalues import p_text, pvalue
from evalkit.gate.model import GateOptions, GateReport
from evalkit.gate.procedure import evaluate_gate
from evalkit.gate.reference import Reference
from evalkit.report import render_html, render_json, render_markdown
from evalkit.report.escape import html_text
from evalkit.report.summary import confidence, result
from evalkit.stats import familywise as fw

HIGH, HIGH2, LOW = "fwg_high", "fwg_high2", "fwg_low"
for _name, _hib in ((HIGH, True), (HIGH2, True), (LOW, False)):
    register_metric(_name, higher_is_better=_hib)(lambda _r, _c: 0.0)

SD = 0.1  # per-run noise around the case's level: differences have sd 0.1·√2
RHO = 0.6  # correlation of HIGH2's noise with HIGH's (the checks move together)
ALPHA = 0.05


def _artifact(name: str, values: dict[str, dict[str, float]]) -> RunArtifact:
    rows = [CaseResult(cid, TargetResponse([cid], latency_ms=10.0), v) for cid, v in values.items()]
    return build_artifact(
        RunResult(name, rows),
        [HIGH, HIGH2, LOW],
        goldens=GoldensInfo("set", {cid: f"fp-{cid}" for cid in values}),
        git=("deadbeef", False),
        seed=1,
    )


def _runs(
    n: int, rng: np.random.Generator, shift: tuple[float, float, float] = (0.0, 0.0, 0.0)
) -> tuple[RunArtifact, RunArtifact, RunArtifact]:
    """Candidate, baseline, reference; the candidate moved by ``shift`` (per metric)."""
    level = rng.uniform(0.3, 0.7, n)
    out = []
    for side in range(3):
        e1, e2, e3 = rng.standard_normal((3, n))
        e2 = RHO * e1 + math.sqrt(1.0 - RHO * RHO) * e2
        move = shift if side == 0 else (0.0, 0.0, 0.0)
        values = {
            f"c{i:03d}": {
                HIGH: float(level[i] + SD * e1[i] + move[0]),
                HIGH2: float(level[i] + SD * e2[i] + move[1]),
                LOW: float(level[i] + SD * e3[i] + move[2]),
            }
            for i in range(n)
        }
        out.append(_artifact(("cand", "base", "ref")[side], values))
    return out[0], out[1], out[2]


def _checks(n: int, *, reference: bool, margin_ses: float = 2.8) -> list[CheckSpec]:
    se = SD * math.sqrt(2.0 / n)
    checks = [
        CheckSpec(id="floor", metric=HIGH, op=">=", threshold=0.0),
        CheckSpec(id="high", metric=HIGH, vs_baseline="no_significant_regression"),
        CheckSpec(id="low", metric=LOW, vs_baseline="no_significant_regression"),
        # with nothing changed it fails when its interval reaches the margin: ~20-25% here
        CheckSpec(
            id="ni", metric=HIGH2, vs_baseline="non_inferiority", margin=round(margin_ses * se, 4)
        ),
    ]
    if reference:
        checks.append(CheckSpec(id="drift", metric=HIGH2, vs_reference="no_significant_regression"))
    else:  # max-T needs one other side: a second test on the baseline instead
        checks.append(CheckSpec(id="high2", metric=HIGH2, vs_baseline="no_significant_regression"))
    return checks


@dataclass(frozen=True)
class Cell:
    simulated: float
    printed: float  # mean over the gates
    trials: int
    notes: tuple[str, ...]

    @property
    def se(self) -> float:
        p = min(max(self.simulated, 1.0 / self.trials), 1.0 - 1.0 / self.trials)
        return math.sqrt(p * (1.0 - p) / self.trials)


def _gate(
    correction: str, reference: bool, n: int, rng: np.random.Generator, **kw: float
) -> GateReport:
    cand, base, ref = _runs(n, rng)
    return evaluate_gate(
        _checks(n, reference=reference, **kw),
        cand,
        base,
        GateOptions(n_resamples=999, seed=int(rng.integers(1 << 30)), correction=correction),
        reference=Reference.of(ref) if reference else None,
    )


def simulate(correction: str, reference: bool, n: int, trials: int, seed: int, **kw: float) -> Cell:
    rng = np.random.default_rng(seed)
    failed = 0
    printed = []
    notes: tuple[str, ...] = ()
    for _ in range(trials):
        report = _gate(correction, reference, n, rng, **kw)
        tested = [v for v in report.verdicts if v.comparison is not None]
        assert len(tested) == report.n_vs_baseline_tests == 4  # the threshold is no test
        failed += any(v.status == "fail" for v in tested)
        assert report.alpha_familywise is not None
        assert report.familywise is not None
        assert report.familywise.estimated  # every check pairs the same cases
        printed.append(report.alpha_familywise)
        notes = report.notes
    return Cell(failed / trials, float(np.mean(printed)), trials, notes)


def _agrees(cell: Cell, slack: float = 0.015) -> bool:
    return abs(cell.simulated - cell.printed) <= 3.0 * cell.se + slack


def test_the_printed_rate_is_the_gates_own_rate() -> None:
    """Quick tier: every check kind, no correction.  The inverted margin printed ~75%."""
    cell = simulate("none", True, 40, 100, seed=2301)
    assert 0.15 < cell.printed < 0.40
    assert _agrees(cell, slack=0.03), cell


NEAR, FAR = 2.8, 50.0  # margins in standard errors: fails ~22% with nothing changed / never
CELLS = [
    ("none", True, NEAR),
    ("holm", True, NEAR),
    ("maxt", False, NEAR),  # max-T runs: one shared null over the baseline's cases
    ("maxt", True, NEAR),  # a drift check in the family: the gate falls back to Holm, says so
    # the tests alone: where the correction, not the margin, sets the rate
    ("none", True, FAR),
    ("holm", True, FAR),
    ("maxt", False, FAR),
]


@pytest.mark.slow
@pytest.mark.parametrize(("correction", "reference", "margin"), CELLS)
def test_the_printed_rate_holds_for_every_correction(
    correction: str, reference: bool, margin: float
) -> None:
    trials = int(os.environ.get("EVALKIT_FAMILYWISE_TRIALS", "150"))
    cell = simulate(correction, reference, 40, trials, seed=2302, margin_ses=margin)
    print(
        f"\n{correction:>4} reference={reference!s:5} margin={margin:g} SE n=40 trials={trials}: "
        f"simulated {cell.simulated:.1%} ± {cell.se:.1%}, printed (mean) {cell.printed:.1%}"
    )
    if correction == "maxt" and reference:
        assert any("Holm's correction was used instead" in note for note in cell.notes)
    assert _agrees(cell), cell


# ----------------------------------------------------------------------------- printed p


_P = re.compile(r"(Holm-adjusted p|max-T-adjusted p|p vs margin|p)(=|<)(\d\.\d{4})")


def _printed_p(text: str) -> tuple[str, float, str]:
    """(label, value, relation) of the deciding p in one report line."""
    found = _P.findall(text)
    assert found, text
    label, relation, value = found[0]
    return label, float(value), relation


@pytest.mark.parametrize("correction", ["none", "holm", "maxt"])
def test_every_printed_p_is_the_one_that_decided(correction: str) -> None:
    """Each report prints the deciding p, labelled: ≤ α exactly when the interval
    excludes what the check tests (0, or the margin), which is what decided."""
    rng = np.random.default_rng({"none": 11, "holm": 12, "maxt": 13}[correction])
    labels = set()
    for trial in range(12):
        n = 30
        shift = tuple(float(s) for s in rng.choice([-0.08, -0.03, 0.0, 0.03, 0.08], size=3))
        cand, base, _ = _runs(n, rng, shift)  # type: ignore[arg-type]
        checks = _checks(n, reference=False, margin_ses=1.0 + trial % 4)
        report = evaluate_gate(
            checks, cand, base, GateOptions(n_resamples=999, seed=trial, correction=correction)
        )
        markdown = render_markdown(report, config_name="x")
        page = render_html(report)
        data = render_json(report)
        for text in (markdown, page, str(data)):
            assert "p=<" not in text
        for v, row in zip(report.verdicts, data["checks"], strict=True):
            c = v.comparison
            if c is None:
                continue
            line = result(v)  # the terminal's and the markdown table's cell
            label, shown, relation = _printed_p(line)
            table_row = next(r for r in markdown.splitlines() if f"| {v.check_id} |" in r)
            assert _printed_p(table_row) == (label, shown, relation)
            assert _printed_p(v.message)[:2] == (label, shown)
            labels.add(label)
            ni = v.mode == "non_inferiority"
            adjusted = c.p_adjusted is not None
            assert adjusted == (correction != "none" and not ni)
            expected = "p vs margin" if ni else "p"
            if adjusted:
                expected = {"holm": "Holm-adjusted p", "maxt": "max-T-adjusted p"}[c.correction]
                assert f"(unadjusted p{'<' if c.p_value < 0.00005 else '='}" in v.message
            assert label == expected
            assert row["comparison"]["deciding_p"] == pytest.approx(c.deciding_p)
            assert row["comparison"]["p_label"] == label
            assert row["comparison"]["p_value"] == pytest.approx(c.p_value)
            # the printed p against α says what the interval says about the tested value
            excluded = c.ci_low > c.tested_value or c.ci_high < c.tested_value
            if relation == "<" or shown < ALPHA - 5e-5:
                assert excluded, line
            elif shown > ALPHA + 5e-5:
                assert not excluded, line
            bad = c.delta < c.tested_value if v.higher_is_better else c.delta > c.tested_value
            if ni:  # fails unless the interval clears the margin on the good side
                assert (v.status == "fail") == (not excluded or bad), line
            else:  # fails only when the interval lies wholly on the bad side
                assert (v.status == "fail") == (excluded and bad), line
            # the HTML forest plot's label: the same p, escaped for the page
            assert html_text(f"{confidence(c.confidence)}, {p_text(c.deciding_p, label)}") in page
    assert "p vs margin" in labels


# ----------------------------------------------------------------------------- the estimate


def _tested(diffs: np.ndarray, mode: str, tested: float, corrected: bool) -> fw.TestedCheck:
    return fw.TestedCheck(diffs, "t", ALPHA, True, tested, corrected, mode)


def test_the_estimate_on_known_answers() -> None:
    """Cases with an answer known without simulation, each a few milliseconds."""
    rng = np.random.default_rng(5)
    d = rng.standard_normal(200)
    nsr = "no_significant_regression"
    # the same metric twice is one test: α/2 (not 1 − 0.975²); Holm halves it, max-T not
    twice = [_tested(d, nsr, 0.0, True), _tested(d.copy(), nsr, 0.0, True)]
    assert fw.familywise_rate(twice, "none", 1).rate == pytest.approx(0.025, abs=0.004)
    assert fw.familywise_rate(twice, "holm", 1).rate == pytest.approx(0.0125, abs=0.003)
    assert fw.familywise_rate(twice, "maxt", 1).rate == pytest.approx(0.025, abs=0.004)
    # non-inferiority with nothing changed fails when its interval reaches the margin:
    # at a margin of 2·q standard errors that is about α/2 (the inverted line gave 1 − α/2)
    se = float(d.std(ddof=1)) / math.sqrt(d.size)
    margin = 2.0 * 1.972 * se
    ni = fw.familywise_rate([_tested(d, "non_inferiority", -margin, False)], "none", 1).rate
    assert 0.015 < ni < 0.04
    # a margin far beyond the noise is never reached
    far = fw.familywise_rate([_tested(d, "non_inferiority", -50.0 * se, False)], "none", 1)
    assert far.rate == 0.0
    # a check whose differences never vary cannot fail, but still counts in Holm's k
    flat = _tested(np.zeros(200), nsr, 0.0, True)
    assert fw.familywise_rate([flat], "none", 1).rate == 0.0
    one = fw.familywise_rate([_tested(d, nsr, 0.0, True)], "holm", 1).rate
    assert fw.familywise_rate([_tested(d, nsr, 0.0, True), flat], "holm", 1).rate < one


def test_p_is_printed_by_one_formatter() -> None:
    assert pvalue(0.04349) == "0.0435"
    assert pvalue(0.00004) == "<0.0001"
    assert pvalue(float("nan")) == "n/a"
    assert p_text(0.00004) == "p<0.0001"
    assert p_text(0.2, "p vs margin") == "p vs margin=0.2000"
    assert p_text(0.0, "Holm-adjusted p") == "Holm-adjusted p<0.0001"


def test_the_bound_with_an_aggregate_beside_per_case_checks() -> None:
    """An aggregate check (no per-case differences) beside corrected and uncorrected
    per-case checks takes the bound: α/2 per uncorrected check plus the family's smallest α.
    It used to raise on comparing the checks' arrays."""
    rng = np.random.default_rng(6)
    nsr = "no_significant_regression"
    corrected = _tested(rng.standard_normal(50), nsr, 0.0, True)
    alone = _tested(rng.standard_normal(50), "non_inferiority", -0.1, False)
    aggregate = fw.TestedCheck(None, "bootstrap", ALPHA, True, 0.0, False, nsr)
    rate = fw.familywise_rate([corrected, alone, aggregate], "holm", 1)
    assert not rate.estimated
    assert rate.rate == pytest.approx(ALPHA / 2 + ALPHA / 2 + ALPHA)
