"""The terminal report: content, colour only when wanted, and no injection via rich."""

from __future__ import annotations

import dataclasses
import io
import re

import pytest
from rich.console import Console

from evalkit.errors import InputError
from evalkit.gate.model import GateReport
from evalkit.report import summary as S
from evalkit.report.terminal import render_terminal

from .samples import SCENARIOS, errored, failing, incomparable, no_baseline, passing

ANSI = "\x1b["
COLOUR = re.compile(r"\x1b\[[0-9;]*(?:3[0-8]|9[0-7]|4[0-8])(?:;[0-9;]*)?m")


def _text(report: object, **kw: object) -> str:
    out = render_terminal(report, capture=True, **kw)  # type: ignore[arg-type]
    assert isinstance(out, str)
    return out


def test_headline_table_and_reasons() -> None:
    out = _text(failing())
    lines = out.splitlines()
    assert lines[0] == "FAIL: 1 of 3 checks passed; blocking: recall_floor, no_ndcg_regression"
    assert "Baseline main · 100 cases · commit fedcba9" in out
    # two compared checks at a 9.8% bound: no risk line, the header is the verdict alone
    assert "Unchanged runs fail" not in out
    assert lines[1].startswith("Candidate candidate")
    row = next(line for line in lines if "no_ndcg_regression" in line and "fail" in line)
    assert "0.7377 → 0.6965: Δ -0.0412 [-0.0650, -0.0170]  p=0.0008  15/34/51" in row
    assert "result (95% CI)" in out
    assert "✗ recall_floor: recall@10 = 0.55 misses >= 0.6" in out
    assert "Most regressed for no_ndcg_regression:" in out
    assert "q0068  0.4230 → 0.1449 (-0.2781)" in out


def test_checks_keep_the_checks_file_order() -> None:
    out = _text(failing())
    assert out.index("recall_floor") < out.index("no_ndcg_regression") < out.index("recall_st")


def test_no_baseline_incomparable_and_failed_cases_are_shown() -> None:
    said = "No baseline: 1 vs_baseline check had nothing to compare against, so a regression"
    assert said in _text(no_baseline())  # the markdown's words (summary.no_baseline)
    inc = _text(incomparable())
    assert "incomparable" in inc
    assert "judge model changed" in inc
    assert "1 added · 1 removed" not in inc
    assert "2 added · 1 removed · 1 changed" in inc  # the PR comment's words
    err = _text(errored())
    assert err.startswith("ERROR: 2 of 100 cases failed to run")
    assert "q0042: TimeoutError: no response within 30s" in err


def test_no_colour_unless_asked() -> None:
    assert ANSI not in _text(failing())
    assert ANSI not in _text(failing(), color=False)
    assert ANSI in _text(failing(), color=True)


def test_auto_colour_follows_the_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not a TTY (pytest's capture): no colour; FORCE_COLOR forces it; NO_COLOR wins."""
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    assert render_terminal(passing()) is None
    assert ANSI not in capsys.readouterr().out
    monkeypatch.setenv("FORCE_COLOR", "1")
    render_terminal(passing())
    assert "\x1b[1;32mPASS" in capsys.readouterr().out  # bold green
    monkeypatch.setenv("NO_COLOR", "1")
    render_terminal(passing())
    plain = capsys.readouterr().out
    # NO_COLOR removes colour; rich may keep bold, which the NO_COLOR convention allows.
    assert not COLOUR.search(plain)
    assert plain.startswith("\x1b[1mPASS\x1b[0m: 3 of 3 checks passed")


def test_prints_into_a_given_console() -> None:
    buf = io.StringIO()
    assert render_terminal(failing(), console=Console(file=buf, width=150)) is None
    assert buf.getvalue().startswith("FAIL: 1 of 3")
    with pytest.raises(InputError, match="either console=, or color=/capture="):
        render_terminal(failing(), console=Console(file=buf), color=True)


def test_untrusted_text_cannot_inject_markup_or_escapes() -> None:
    report = failing()
    evil = "[bold red]x[/] \x1b[2J\x1b]0;title\x07 :smile: \u202eevil\nnext"
    v = dataclasses.replace(report.verdicts[0], check_id=evil, message=evil)
    out = _text(dataclasses.replace(report, verdicts=(v,)), color=True, width=250)
    assert "[bold red]x[/]" in out
    assert ":smile:" in out
    assert "\\x1b[2J" in out
    assert "\\u202e" in out
    assert "\x1b[2J" not in out
    assert "\x07" not in out
    assert "\u202e" not in out
    assert "evil ⏎ next" in out  # a newline is shown, never obeyed
    assert not any(line.startswith("next") for line in out.splitlines())


def _decisive(report: GateReport) -> list[str]:
    """Every id, Δ, interval bound and p the reader decides by, as the report writes them."""
    out = []
    for v in report.verdicts:
        out.append(v.check_id)
        c = v.comparison
        if c is not None:
            out += [S.signed(c.delta), S.signed(c.ci_low), S.signed(c.ci_high), S.p_cell(v)]
    return out


@pytest.mark.parametrize("name", sorted(SCENARIOS))
@pytest.mark.parametrize("width", [80, 120])
def test_no_decisive_digit_is_cut_at_any_width(name: str, width: int) -> None:
    """COLUMNS=80: the layout wraps by block, never through an id, a bound or a p."""
    report = SCENARIOS[name]()
    out = _text(report, width=width)
    # The checks' numbers fit (the prose around them is soft-wrapped by the terminal).
    numbers = [line for line in out.splitlines() if line.startswith("    ")]
    assert all(len(line) <= width for line in numbers), numbers
    # Joined back, the lines hold each number whole; on its own line, never split.
    for token in _decisive(report):
        assert any(token in line for line in out.splitlines()), (token, out)
    # ...and no line that shows one was cut short.
    shown = [line for line in out.splitlines() if any(t in line for t in _decisive(report))]
    assert not any("…" in line for line in shown if "flaky" not in line), shown


def test_a_wide_terminal_gets_one_table_and_a_narrow_one_blocks() -> None:
    wide = _text(failing(), width=120)
    assert "check               metric       status  result (95% CI)" in wide
    narrow = _text(failing(), width=80)
    assert "result (95% CI)" not in narrow
    assert "Intervals are 95% confidence intervals." in narrow
    assert (
        "✗ no_ndcg_regression  ndcg@10 ↑  fail\n    0.7377 → 0.6965: Δ -0.0412 [-0.0650," in narrow
    )


def test_long_ids_wrap_whole_at_80_columns() -> None:
    report = failing()
    long_id = "retrieval_quality_for_the_enterprise_customers_of_region_emea_" + "x" * 14
    v = dataclasses.replace(report.verdicts[1], check_id=long_id)
    out = _text(dataclasses.replace(report, verdicts=(v,)), width=80)
    assert long_id in out.replace("\n", "")  # folded over two lines, every character kept
    assert "p=0.0008" in out


@pytest.mark.parametrize("width", [60, 80])
def test_the_risk_line_wraps_at_words_and_keeps_its_rate_whole(width: int) -> None:
    """The rate is the figure a reviewer quotes: it is the header's second line where it
    is high, wrapped at words, never split mid-number, and no line ends in a space."""
    report = dataclasses.replace(failing(), alpha_familywise=0.1234)
    out = _text(report, width=width)
    lines = out.splitlines()
    assert lines[0].startswith("FAIL:")
    start = next(i for i, line in enumerate(lines) if line.startswith("Unchanged runs"))
    assert start <= 2  # the header: the verdict (wrapped at 60 columns), then the risk
    assert lines[start].startswith("Unchanged runs fail one of these 2 compared checks")
    end = next(i for i, line in enumerate(lines) if line.startswith("Candidate"))
    block = lines[start:end]
    assert all(len(line) <= width and not line.endswith(" ") for line in block), block
    assert "up to 12.3% of the time" in " ".join(" ".join(block).split())
    assert any("12.3%" in line for line in block)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
@pytest.mark.parametrize("width", [80, 160])
def test_no_line_ends_in_a_space_in_colour_or_not(name: str, width: int) -> None:
    ansi = re.compile(r"\x1b\[[0-9;]*m")
    for color in (False, True):
        out = _text(SCENARIOS[name](), color=color, width=width)
        for line in ansi.sub("", out).splitlines():
            assert line == line.rstrip(), (name, width, color, line)
            assert len(line) <= width or " " not in line.strip(), (name, width, line)
