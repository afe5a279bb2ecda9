"""Statistical warnings are visible at a glance, not only inside collapsed details."""

from __future__ import annotations

from dataclasses import replace

from evalkit.gate.model import GateReport
from evalkit.report.markdown import render_markdown
from evalkit.report.terminal import render_terminal

from .samples import passing

SMALL_N = "only 38 cases: the percentile bootstrap rejects a true null too often below 80 cases"
SKEW = "the per-case differences are heavily skewed (skewness +3.5, n = 38): inspect them"


def with_warnings() -> GateReport:
    report = passing()
    verdicts = []
    for v in report.verdicts:
        if v.comparison is not None:
            v = replace(v, comparison=replace(v.comparison, warnings=(SMALL_N, SKEW)))
        verdicts.append(v)
    return replace(report, verdicts=tuple(verdicts))


def test_markdown_lists_caveats_above_the_details() -> None:
    text = render_markdown(with_warnings(), config_name="cfg")
    head, _, _ = text.partition("<details>")
    assert "**Read with care**" in head
    assert "only 38 cases" in head
    assert "heavily skewed" in head


def test_markdown_has_no_caveat_section_without_warnings() -> None:
    assert "Read with care" not in render_markdown(passing(), config_name="cfg")


def test_terminal_prints_each_caveat_with_its_checks() -> None:
    out = render_terminal(with_warnings(), color=False, width=200, capture=True)
    assert out is not None
    lines = [line for line in out.splitlines() if "read with care" in line]
    assert len(lines) == 2
    assert "only 38 cases" in lines[0]
