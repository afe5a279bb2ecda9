"""Statistical warnings are visible at a glance, not only inside collapsed details."""

from __future__ import annotations

from dataclasses import replace

import pytest

from evalkit.gate.model import GateReport, Status
from evalkit.report.markdown import render_markdown
from evalkit.report.terminal import render_terminal

from .samples import passing

SMALL_N = "only 38 cases: the percentile bootstrap rejects a true null too often below 80 cases"
SKEW = "the per-case differences are heavily skewed (skewness +3.5, n = 38): inspect them"


def with_warnings(p_value: float = 0.0003, status: Status = "pass") -> GateReport:
    report = passing()
    verdicts = []
    for v in report.verdicts:
        if v.comparison is not None:
            comp = replace(v.comparison, warnings=(SMALL_N, SKEW), p_value=p_value)
            v = replace(v, comparison=comp, status=status)
        verdicts.append(v)
    return replace(report, verdicts=tuple(verdicts))


def _open_part(text: str) -> str:
    """The comment above its first collapsed section."""
    return text.partition("<details>")[0]


@pytest.mark.parametrize(
    ("p_value", "status"), [(0.04, "pass"), (0.06, "pass"), (0.0003, "fail"), (0.9, "fail")]
)
def test_caveats_that_can_change_a_verdict_are_shown_open(p_value: float, status: Status) -> None:
    """A borderline p (α/3 to 3α) or a check that did not pass: the caveat is in view,
    beside its check, saying what to do; the procedure's reasoning stays in the details."""
    head = _open_part(render_markdown(with_warnings(p_value, status), config_name="cfg"))
    check = "- ⚠️ **no&#95;ndcg&#95;regression**: "
    assert f"{check}Only 38 cases: treat a borderline result as undecided, or add cases." in head
    assert f"{check}A few extreme cases drive this result: read the most changed" in head
    assert "percentile bootstrap rejects" not in head  # the reasoning: in the details
    details = render_markdown(with_warnings(p_value, status), config_name="cfg").split(
        "#### Per-check details", 1
    )[1]
    assert "- warning: only 38 cases: the percentile bootstrap rejects" in details


@pytest.mark.parametrize("p_value", [0.0003, 0.0001, 0.2, 1.0])
def test_caveats_on_clear_cut_passes_are_folded(p_value: float) -> None:
    """p = 1 on an identical rerun or 0.0003 on a clear win: no warning in view; each is
    whole, one line, in its check's details."""
    text = render_markdown(with_warnings(p_value), config_name="cfg")
    head = _open_part(text)
    assert "⚠️" not in head
    assert "only 38 cases" not in head.lower()
    details = text.split("#### Per-check details", 1)[1]
    assert f"- warning: {SMALL_N}" in details.replace("&#95;", "_")
    assert "- warning: the per-case differences are heavily skewed" in details


def test_markdown_has_no_caveat_section_without_warnings() -> None:
    text = render_markdown(passing(), config_name="cfg")
    assert "⚠️" not in text
    assert "warning:" not in text


def test_terminal_prints_each_caveat_beside_its_check() -> None:
    for width in (200, 80):
        out = render_terminal(with_warnings(0.04), color=False, width=width, capture=True)
        assert out is not None
        flat = " ".join(out.split())
        assert "⚠ no_ndcg_regression: Only 38 cases" in flat or (
            "no_ndcg_regression" in flat and "⚠ Only 38 cases" in flat
        )
        assert "A few extreme cases drive this result" in flat
        assert all(len(line) <= width for line in out.splitlines())


def test_every_warning_the_statistics_write_becomes_a_short_instruction() -> None:
    """Generated from the statistics' own warnings: what is in view says what to do, in
    a sentence or two, with no figures in parentheses (those are in the details)."""
    import numpy as np

    from evalkit.report.advice import advice_for
    from evalkit.stats.diagnostics import warnings_for

    rng = np.random.default_rng(0)
    seen: set[str] = set()
    for n in (8, 15, 24, 40, 79, 200):
        for shape in ("normal", "skewed", "losses"):
            diffs = {
                "normal": rng.normal(0, 1, n),
                "skewed": rng.exponential(1, n) ** 3,
                "losses": -np.abs(rng.normal(0, 1, n)),
            }[shape]
            for method in ("bootstrap", "t", "t+skew-t", "skew-t"):
                for kind in ("case", "aggregate"):
                    found = warnings_for(
                        n=n,
                        method=method,
                        kind=kind,
                        diffs=None if kind == "aggregate" else diffs,
                        higher_is_better=True,
                    )
                    for w in found:
                        advice = advice_for(w.message)
                        seen.add(w.code)
                        assert len(advice) <= 130, advice
                        assert "(" not in advice, advice
                        assert advice.endswith("."), advice
                        assert any(verb in advice for verb in ("treat", "read", "check", "add")), (
                            advice
                        )
    assert {"small_n", "skewed", "no_wins", "aggregate_small_n"} <= seen
