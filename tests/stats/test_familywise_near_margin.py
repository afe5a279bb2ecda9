"""A non-inferiority check whose margin sits close to 0 fails often with nothing changed;
the family-wise sentence names it with its own rate, read off the same simulation.

The quick start is the case in point: two tests at α/2 = 2.5% each, a family rate of
about 6%, because `recall_not_worse`'s margin is 1.8 half-widths of its interval from 0.
"""

from __future__ import annotations

import dataclasses
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

import evalkit.stats.familywise as fw
from evalkit.stats.familywise import familywise_rate
from evalkit.stats.rule import fails
from evalkit.stats.tdist import t_quantile
from helpers.cli import evalkit

REPO = Path(__file__).resolve().parents[2]

N = 38
ALPHA = 0.05


def check(diffs: np.ndarray, check_id: str, *, margin: float | None) -> fw.TestedCheck:
    return fw.TestedCheck(
        diffs=diffs,
        procedure="t",
        alpha=ALPHA,
        higher_is_better=True,
        tested_value=0.0 if margin is None else -margin,
        corrected=False,
        mode="no_significant_regression" if margin is None else "non_inferiority",
        check_id=check_id,
    )


def diffs_with_sd(sd: float, seed: int) -> np.ndarray:
    d = np.random.default_rng(seed).normal(0.0, 1.0, N)
    out: np.ndarray = (d - d.mean()) / d.std(ddof=1) * sd
    return out


def half_width(sd: float) -> float:
    return t_quantile(1 - ALPHA / 2, N - 1) * sd / math.sqrt(N)


def test_a_margin_close_to_zero_is_named_with_its_own_rate_and_width() -> None:
    d = diffs_with_sd(0.2, 1)
    margin = 1.8 * half_width(0.2)
    both = familywise_rate(
        [check(diffs_with_sd(0.3, 2), "ndcg_holds", margin=None), check(d, "ni", margin=margin)],
        "none",
        seed=7,
    )
    ((name, rate, widths),) = both.near_margin
    assert name == "ni"
    assert math.isclose(widths, 1.8, rel_tol=1e-9)
    # Its own rate, from another simulation of that check alone: the same within 4 SE.
    alone = familywise_rate([check(d, "ni", margin=margin)], "none", seed=11)
    assert abs(rate - alone.rate) <= 4 * math.sqrt(2 * alone.rate * (1 - alone.rate) / 20_000)
    # Brute force: normal evals of this spread, each decided by the gate's own rule.
    gen = np.random.default_rng(5)
    evals = gen.normal(0.0, 0.2, (20_000, N))
    mean, se = evals.mean(axis=1), evals.std(axis=1, ddof=1) / math.sqrt(N)
    q = t_quantile(1 - ALPHA / 2, N - 1)
    brute = float(np.mean(fails("non_inferiority", mean - q * se, mean + q * se, -margin, True)))
    assert abs(rate - brute) <= 4 * math.sqrt(2 * brute * (1 - brute) / 20_000)
    assert 0.03 < rate < 0.08
    assert both.rate >= rate
    note = both.near_margin_note()
    assert note is not None
    assert note.startswith(f"Of these, ni alone fails {rate:.1%}: a non-inferiority check")
    assert "this one's margin is only 1.8 half-widths of its interval from 0" in note


def test_a_wide_margin_and_a_plain_test_are_not_named() -> None:
    d = diffs_with_sd(0.2, 1)
    rate = familywise_rate(
        [check(d, "plain", margin=None), check(d, "wide", margin=4 * half_width(0.2))],
        "none",
        seed=7,
    )
    assert rate.near_margin == ()
    assert rate.near_margin_note() is None


def test_two_near_margins_are_both_named_in_one_sentence() -> None:
    d = diffs_with_sd(0.2, 1)
    rate = familywise_rate(
        [check(d, "a", margin=1.5 * half_width(0.2)), check(d, "b", margin=1.7 * half_width(0.2))],
        "none",
        seed=7,
    )
    note = rate.near_margin_note()
    assert note is not None
    assert [c for c, _, _ in rate.near_margin] == ["a", "b"]
    assert "a alone fails" in note
    assert ", b alone" not in note
    assert " and b alone " in note
    assert "these margins are only 1.5 and 1.7 half-widths of their intervals" in note
    # Slices keep the note: it is about the checks, which the slices only add to.
    assert rate.with_slices(0.05, "BH").near_margin == rate.near_margin


def test_a_single_near_margin_check_is_the_family_and_is_said_so() -> None:
    d = diffs_with_sd(0.2, 1)
    rate = familywise_rate([check(d, "only", margin=0.7 * half_width(0.2))], "none", seed=7)
    note = rate.near_margin_note()
    assert note is not None
    assert note.startswith(f"Check only fails {rate.rate:.1%} of the time with nothing changed:")


def test_the_quick_start_names_its_near_margin_check(tmp_path: Path) -> None:
    """The first statistical sentence a new user reads, from the gate itself: beside the
    check, its rate and the fix; the family's sentence in the comment's details."""
    example = tmp_path / "repo" / "examples" / "custom_client"  # its output: ../../.evalkit
    shutil.copytree(REPO / "examples" / "custom_client", example)
    result = evalkit(
        "gate", "--config", "evalkit.yaml", "--baseline", "baseline.json",
        "--markdown", "comment.md", cwd=example,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    beside = re.search(
        r"⚠ recall_not_worse: margin 0\.1000 is too tight for 38 cases: an unchanged system "
        r"fails this check (\d+\.\d)% of the time",
        text,
    )
    assert beside is not None, text
    comment = " ".join((example / "comment.md").read_text(encoding="utf-8").split())
    sentence = re.search(r"fails falsely is about (\d+\.\d)%", comment)
    note = re.search(
        r"Of these, recall&#95;not&#95;worse alone fails (\d+\.\d)%: (.*?)\)\.", comment
    )
    assert sentence is not None, comment
    assert note is not None, comment
    family, alone = float(sentence[1]), float(note[1])
    assert float(beside[1]) == alone
    # two tests at 2.5% each: the family rate is explained by the near-margin check
    assert 4.0 <= alone <= family <= alone + 2.5
    assert "this one&#39;s margin is only 1.8 half-widths of its interval from 0" in note[2]


def test_a_gate_with_one_near_margin_check_says_its_rate(tmp_path: Path) -> None:
    """One test, no family sentence: the check says its rate beside it."""
    example = tmp_path / "repo" / "examples" / "custom_client"
    shutil.copytree(REPO / "examples" / "custom_client", example)
    checks = (example / "checks.yaml").read_text(encoding="utf-8")
    start = checks.index("  - id: no_ndcg_regression")
    end = checks.index("  - id: recall_not_worse")
    (example / "checks.yaml").write_text(checks[:start] + checks[end:], encoding="utf-8")
    result = evalkit("gate", "--config", "evalkit.yaml", "--baseline", "baseline.json", cwd=example)
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    note = re.search(
        r"⚠ recall_not_worse: margin 0\.1000 is too tight for 38 cases: an unchanged system "
        r"fails this check (\d+\.\d)% of the time \(its level allows 2\.5%\)\. Use a margin",
        text,
    )
    assert note is not None, text
    assert 4.0 <= float(note[1]) <= 6.5
    assert "Unchanged runs fail" not in text  # one check at 5%: no risk line in the header


@pytest.mark.parametrize("n", [8, 15, 200])
def test_a_lower_is_better_check_mirrors_its_higher_is_better_twin(n: int) -> None:
    """Negated differences, the margin on the other side: the same rate, width and note."""
    d = np.random.default_rng(n).normal(0.0, 0.2, n)
    d = d - d.mean()
    half = t_quantile(1 - ALPHA / 2, n - 1) * float(np.std(d, ddof=1)) / math.sqrt(n)
    up = check(d, "ni", margin=1.5 * half)
    down = dataclasses.replace(up, diffs=-d, higher_is_better=False, tested_value=1.5 * half)
    a = familywise_rate([up], "none", seed=3)
    b = familywise_rate([down], "none", seed=3)
    assert a.near_margin == b.near_margin
    assert a.near_margin_note() == b.near_margin_note()
    assert a.near_margin[0][2] == pytest.approx(1.5)
