"""A margin too tight for the eval's size: the advice's fix works, by the same simulation
that judged the margin (stats.familywise), not by re-deriving the formula."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit._spec.checks import CheckSpec
from evalkit.report.advice import advise_margin, margins_before_run
from evalkit.stats import familywise as F

from .test_comment_size import _artifact


def _judged(diffs: np.ndarray, margin: float) -> tuple[float, float] | None:
    """(rate, half-widths) when the margin is judged too tight, else None."""
    check = F.TestedCheck(
        diffs=diffs,
        procedure="t",
        alpha=0.05,
        higher_is_better=True,
        tested_value=-margin,
        corrected=False,
        mode="non_inferiority",
        check_id="ni",
    )
    found = F.familywise_rate([check], "none", seed=3).near_margin
    return None if not found else (found[0][1], found[0][2])


@pytest.mark.parametrize(("n", "margin"), [(300, 0.004), (300, 0.01), (40, 0.03), (1000, 0.002)])
def test_the_advised_margin_and_the_advised_cases_each_resolve_it(n: int, margin: float) -> None:
    rng = np.random.default_rng(n)
    diffs = rng.normal(0.0, 0.1, n)
    judged = _judged(diffs, margin)
    assert judged is not None, "the margin is too tight for these cases"
    rate, widths = judged
    advice = advise_margin("ni", "ndcg@10", margin, n, rate, 0.025, widths)
    assert advice is not None
    assert advice.fix_margin > margin
    assert advice.fix_cases > n
    assert _judged(diffs, advice.fix_margin) is None
    # the same spread over the advised number of cases
    more = rng.normal(0.0, float(np.std(diffs, ddof=1)), advice.fix_cases)
    more = (more - more.mean()) / more.std(ddof=1) * float(np.std(diffs, ddof=1))
    assert _judged(more, margin) is None
    text = advice.sentence()
    assert f"too tight for {n:,} cases" in text
    assert f"at least {advice.fix_cases:,} cases" in text


def test_before_the_run_the_baseline_spread_judges_the_margin() -> None:
    rng = np.random.default_rng(1)
    values = [round(float(v), 4) for v in rng.random(300)]
    base = _artifact("baseline", {"ndcg@10": values})
    tight = CheckSpec("tight", "ndcg@10", vs_baseline="non_inferiority", margin=0.005)
    roomy = CheckSpec("roomy", "ndcg@10", vs_baseline="non_inferiority", margin=0.2)
    other = CheckSpec("nsr", "ndcg@10", vs_baseline="no_significant_regression")
    found = margins_before_run([tight, roomy, other], base)
    assert [a.check_id for a in found] == ["tight"]
    assert found[0].n == 300
    assert found[0].rate > 0.5
