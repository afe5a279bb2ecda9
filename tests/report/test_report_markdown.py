"""The markdown report (PR comment): golden files, truncation, escaping."""

from __future__ import annotations

import dataclasses
import math
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from evalkit.errors import InputError
from evalkit.gate.model import GateReport
from evalkit.report.markdown import GITHUB_LIMIT, comment_marker, render_markdown

from . import mdcheck
from .samples import (
    HOSTILE,
    SCENARIOS,
    big,
    drift,
    failing,
    hostile,
    no_baseline,
    passing,
    warned,
)

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("EVALKIT_UPDATE_GOLDEN") == "1"


def _balanced(text: str) -> None:
    for tag in ("details", "summary"):
        opened = len(re.findall(rf"<{tag}[ >]", text))
        assert opened == text.count(f"</{tag}>"), tag
    assert text.count("<!--") == text.count("-->") == 1  # the marker, nothing else


# ----------------------------------------------------------------------------- golden files


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_markdown_matches_golden_file(name: str) -> None:
    """Regenerate with EVALKIT_UPDATE_GOLDEN=1 and review the diff by eye."""
    out = render_markdown(SCENARIOS[name](), config_name="evalkit")
    path = GOLDEN / f"{name}.md"
    if UPDATE:
        path.write_text(out, encoding="utf-8")
    assert path.exists(), f"{path} missing: run with EVALKIT_UPDATE_GOLDEN=1"
    assert out == path.read_text(encoding="utf-8")
    _balanced(out)


def test_output_is_deterministic() -> None:
    report = failing()
    assert render_markdown(report, config_name="x") == render_markdown(report, config_name="x")


# ----------------------------------------------------------------------------- content


def test_marker_is_the_first_line_and_headline_the_second() -> None:
    lines = render_markdown(failing(), config_name="evals-search").splitlines()
    assert lines[0] == "<!-- evalkit report config=evals-search -->"
    assert lines[1].startswith("### ❌ FAIL: 1 of 3 checks passed; blocking: ")
    assert "recall&#95;floor" in lines[1]
    assert "no&#95;ndcg&#95;regression" in lines[1]


@pytest.mark.parametrize("name", ["a --> b", "x--!>", "<!-- y", "with space", "é", "-lead", ""])
def test_marker_cannot_be_closed_by_the_config_name(name: str) -> None:
    marker = comment_marker(name)
    inner = marker.removeprefix("<!-- ").removesuffix(" -->")
    # HTML ends a comment only at "-->" or "--!>": no ">" (nor "<", "!") can get in.
    assert re.fullmatch(r"evalkit report config=[A-Za-z0-9._~-]+", inner)
    assert "--" not in inner


def test_marker_keeps_plain_names_and_separates_sanitised_ones() -> None:
    assert comment_marker("evals-search.v2_x") == "<!-- evalkit report config=evals-search.v2_x -->"
    # Two names that sanitise alike must not share a sticky comment.
    assert comment_marker("a b") != comment_marker("a_b") != comment_marker("a/b")


def test_headline_for_each_verdict() -> None:
    heads = {
        name: render_markdown(make(), config_name="c").splitlines()[1]
        for name, make in SCENARIOS.items()
    }
    assert heads["passing"] == "### ✅ PASS: 3 of 3 checks passed"
    assert heads["warn"].startswith("### ⚠️ WARN: 1 of 3 checks passed; not blocking: ")
    assert heads["error"].startswith("### 💥 ERROR: 2 of 100 cases failed to run; 1 of 2 checks")
    assert heads["incomparable"].startswith("### ❌ FAIL: 1 of 2 checks passed; blocking: ")


def test_table_row_is_status_check_metric_delta_ci_and_p() -> None:
    out = render_markdown(failing(), config_name="c")
    assert "| status | check | metric | result (95% CI) | p |\n" in out  # no cases column
    row = next(line for line in out.splitlines() if "| no&#95;ndcg&#95;<wbr>regression |" in line)
    nb = "&nbsp;"
    # a failing row says what moved: before → after, then Δ and its interval
    assert row == (
        f"| ❌{nb}fail | no&#95;ndcg&#95;<wbr>regression | ndcg@&#8288;10{nb}↑ "
        f"| 0.7377{nb}→{nb}0.6965: Δ{nb}-0.0412{nb}[-0.0650,{nb}-0.0170] | p=0.0008 |"
    )
    passing_row = next(line for line in out.splitlines() if "| recall&#95;stable |" in line)
    assert "→" not in passing_row  # a passing row stays short
    assert "Every check covered all 100 cases." in out
    # W / L / T and the detectable change are in the check's details
    details = out.split("<summary>❌ no&#95;ndcg&#95;regression: fail (34 worse", 1)[1]
    assert "paired means: baseline 0.7377, Δ -0.0412" in details
    assert "wins / losses / ties 15 / 34 / 51" in details
    assert "detects a true change of ≥ 0.0153 with 80% power" in details


def test_cases_column_only_where_coverage_is_not_full() -> None:
    out = render_markdown(drift(), config_name="c")
    assert "| p | cases |\n" in out
    assert "| p=0.1900 |  |\n" in out  # the full one: left blank
    assert "| p=0.0004 | 96/100 |\n" in out
    assert "Every check covered" not in out


def test_the_false_alarm_chance_is_in_the_header_only_where_it_changes_the_reading() -> None:
    two = render_markdown(failing(), config_name="c")
    head, _, rest = two.partition("**Candidate**")
    assert "Unchanged runs fail" not in head  # two checks, 9.8%: not in the header
    how = rest.split("<summary>How the checks were decided</summary>", 1)[1]
    assert "2 vs&#95;baseline tests ran" in how.split("</details>", 1)[0]
    assert "is 9.8% (correction: none)" in how
    high = render_markdown(dataclasses.replace(failing(), alpha_familywise=0.2), config_name="c")
    assert high.splitlines()[3] == (
        "Unchanged runs fail one of these 2 compared checks up to 20.0% of the time."
    )
    one = render_markdown(passing(), config_name="c")
    assert "1 vs&#95;baseline test ran." in one
    assert "Unchanged runs fail" not in one


def test_no_baseline_is_loud_and_said_once() -> None:
    out = render_markdown(no_baseline(), config_name="c")
    assert "> [!WARNING]\n> **No baseline**: 1 vs_baseline check had nothing" in out
    assert "| 🔵&nbsp;no&nbsp;baseline | no&#95;ndcg&#95;<wbr>regression |" in out
    assert out.lower().count("no baseline") == 2  # the box and the row's status
    assert out.count("promote") + out.count("Promote") == 1


def test_non_inferiority_margin_and_non_blocking_warn() -> None:
    out = render_markdown(warned(), config_name="c")
    # a row that did not pass: before → after (with the margin), then Δ [interval]
    assert (
        "| 0.7377&nbsp;→&nbsp;0.7584&nbsp;(margin&nbsp;0.0200): Δ&nbsp;-0.0060&nbsp;"
        "[-0.0310,&nbsp;+0.0180] | p vs margin=0.6200 |" in out
    )
    assert "| ⚠️&nbsp;warn |" in out
    assert "- baseline promoted from main at fedcba9" in out


def test_non_finite_statistics_show_as_na_with_a_note() -> None:
    report = failing()
    v = report.verdicts[1]
    assert v.comparison is not None
    bad = dataclasses.replace(v, comparison=dataclasses.replace(v.comparison, p_value=math.nan))
    report = dataclasses.replace(report, verdicts=(report.verdicts[0], bad, report.verdicts[2]))
    out = render_markdown(report, config_name="c")
    assert "p=n/a" in out
    assert "p=nan" not in out.lower()
    assert "not finite (NaN or infinite) and show as n/a: checks[1].comparison.p_value" in out


def test_details_url_is_linked_and_javascript_refused() -> None:
    out = render_markdown(passing(), config_name="c", details_url="https://ci.example/run/1 (x)")
    assert out.endswith("[JSON report and artifact](https://ci.example/run/1%20%28x%29)\n")
    with pytest.raises(InputError, match="details_url 'javascript:alert"):
        render_markdown(passing(), config_name="c", details_url="javascript:alert(1)")


@pytest.mark.parametrize("budget", [9_999, 65_536, 100_000])
def test_budget_outside_githubs_limit_is_refused(budget: int) -> None:
    with pytest.raises(InputError, match=f"max_chars={budget}: .* 65,535"):
        render_markdown(passing(), config_name="c", max_chars=budget)


# ----------------------------------------------------------------------------- truncation


@pytest.fixture(scope="module")
def big_report() -> GateReport:
    return big(5_000)


def test_5000_case_report_fits_and_keeps_the_essentials(big_report: GateReport) -> None:
    out = render_markdown(big_report, config_name="evalkit")
    assert len(out) < GITHUB_LIMIT
    assert len(out.encode()) <= 60_000
    assert out.startswith("<!-- evalkit report config=evalkit -->\n### 💥 ERROR: 150 of 5,000")
    _balanced(out)
    # The checks table and the why-list survive whole; long lists say what they left out.
    assert out.count("| ❌&nbsp;fail | no&#95;") == 3
    assert "| ✅&nbsp;pass | p95&#95;ceiling |" in out
    assert "more cases not shown (see the JSON report/artifact)" in out
    # Each check lists its worst changed cases, and counts the rest.
    assert out.count("more changed cases not shown") == 3
    # Every table parses to rows of one width: nothing was cut mid-row.
    for rows in mdcheck.tables(out):
        assert len(set(rows)) == 1


@pytest.mark.parametrize("budget", [10_000, 20_000, 40_000, 65_535])
def test_every_budget_is_respected_without_cutting_tags(
    big_report: GateReport, budget: int
) -> None:
    out = render_markdown(big_report, config_name="evalkit", max_chars=budget)
    assert len(out.encode()) <= budget
    _balanced(out)
    assert out.splitlines()[1].startswith("### 💥 ERROR")
    assert out.count("| ❌&nbsp;fail | no&#95;") == 3  # the checks table is the last to go
    for rows in mdcheck.tables(out):
        assert len(set(rows)) == 1


def test_least_important_rows_go_first(big_report: GateReport) -> None:
    tight = render_markdown(big_report, config_name="evalkit", max_chars=10_000)
    # Per-case rows go first; every other list keeps its first rows.
    assert "| case | baseline | candidate |" not in tight  # no per-case row survives
    assert "| fail-0009 |" in tight
    assert "- added-0004" in tight
    assert "- changed-0004" in tight
    roomy = render_markdown(big_report, config_name="evalkit", max_chars=30_000)
    assert roomy.count("more changed cases not shown") == 3  # the worst ten of each


def test_many_checks_drop_whole_sections_then_table_rows() -> None:
    report = failing()
    many = tuple(
        dataclasses.replace(v, check_id=f"{v.check_id}_{i:03d}")
        for i in range(150)
        for v in report.verdicts
    )
    out = render_markdown(
        dataclasses.replace(report, verdicts=many), config_name="c", max_chars=10_000
    )
    assert len(out.encode()) <= 10_000
    _balanced(out)
    assert "Per-check details omitted to fit the comment" in out
    assert re.search(r"… [\d,]+ more checks not shown \(see the JSON report/artifact\)", out)
    assert out.splitlines()[1].startswith("### ❌ FAIL: 150 of 450 checks passed; blocking: ")


def test_short_report_is_not_truncated() -> None:
    out = render_markdown(failing(), config_name="c")
    # only the case lists' fixed cap (the worst ten changed cases of each check)
    assert "not shown" not in out.replace("more changed cases not shown", "")
    assert "omitted" not in out


# ----------------------------------------------------------------------------- escaping


@pytest.fixture(scope="module")
def hostile_md() -> str:
    return render_markdown(hostile(), config_name=HOSTILE)


def test_hostile_text_opens_no_tag_link_code_or_comment(hostile_md: str) -> None:
    tags = mdcheck.parse(hostile_md)
    ours = {"h3", "p", "strong", "br", "table", "thead", "tbody", "tr", "th", "td", "ul", "li"}
    ours |= {"details", "summary", "h4", "wbr"}
    assert set(tags.starts) <= ours, set(tags.starts) - ours
    assert tags.comments == [tags.comments[0]]
    assert tags.comments[0].startswith(" evalkit report")
    assert "<script" not in mdcheck.to_html(hostile_md)


def test_hostile_text_never_forms_a_mention_or_issue_reference(hostile_md: str) -> None:
    seen = mdcheck.raw_text(hostile_md)
    assert "octocat" in seen
    assert not mdcheck.MENTION.search(seen)
    assert not mdcheck.ISSUE_REF.search(seen)


def test_hostile_text_keeps_table_cells_whole(hostile_md: str) -> None:
    widths = mdcheck.tables(hostile_md)
    assert [set(rows) for rows in widths] == [{6}, {2}, {5}]


@pytest.mark.parametrize(
    "tag",
    [
        "cand-name", "base-name", "check-id", "check2", "metric", "metric2", "message",
        "message2", "mode", "warning", "failed-id", "failed-error", "added",
        "removed", "changed", "delta-id", "note", "commit", "created", "base-created",
    ],
)  # fmt: skip
def test_every_untrusted_field_is_shown_literally(hostile_md: str, tag: str) -> None:
    """Escaped, not dropped: the reader sees the hostile text as text."""
    seen = mdcheck.visible_text(hostile_md)
    assert f"{tag}:<script>alert(1)</script>" in seen


def test_newlines_and_controls_are_shown_not_obeyed() -> None:
    make: Callable[[], GateReport] = failing
    report = make()
    odd = "id\nwith\r\nbreaks\u202eevil\x1b[31m"
    v = dataclasses.replace(report.verdicts[0], check_id=odd, message=odd)
    out = render_markdown(dataclasses.replace(report, verdicts=(v,)), config_name="c")
    assert "id<br>with<br>breaks&#92;u202eevil&#92;x1b&#91;31m" in out
    assert "\u202e" not in out
    assert "\x1b" not in out
    assert "\r" not in out


def test_the_stores_reason_for_no_baseline_is_said_once_in_the_box() -> None:
    why = "store artifact: no artifact 'evalkit-baseline' from a push to main; promote first"
    report = dataclasses.replace(no_baseline(), notes=(why, "another note"))
    out = render_markdown(report, config_name="c", baseline_detail=why)
    seen = mdcheck.visible_text(out)
    assert seen.count("no artifact 'evalkit-baseline'") == 1
    box = out.split("> [!WARNING]\n", 1)[1].split("\n\n", 1)[0]
    assert "no artifact &#39;evalkit-baseline&#39;" in box
    assert "Promote a run" not in box  # the store's sentence says how, for its store
    assert "- another note" in out
    # With a baseline the store's sentence is a note like any other.
    found = dataclasses.replace(failing(), notes=("artifact 'b' #3 from push run 9",))
    kept = render_markdown(found, config_name="c", baseline_detail=found.notes[0])
    assert "- artifact &#39;b&#39; #&#8288;3 from push run 9" in kept


def test_changed_cases_only_worst_first_in_natural_order_with_ties_counted() -> None:
    from evalkit.gate.model import CaseDelta

    from .samples import comparison

    ds = tuple(
        CaseDelta(str(i), 0.5 + d, 0.5, d)
        for i, d in ((10, -0.2), (2, -0.2), (1, 0.0), (3, 0.1), (20, 0.0), (100, -0.2))
    )
    report = failing()
    v = report.verdicts[1]
    v = dataclasses.replace(v, comparison=comparison(ds))
    out = render_markdown(dataclasses.replace(report, verdicts=(v,)), config_name="c")
    details = out.split("#### Per-check details", 1)[1]
    assert "(3 worse, 1 better, 2 tied)" in details
    ids = [line.split(" | ")[0][2:] for line in details.splitlines() if line.startswith("| ")]
    assert ids[1:] == ["2", "10", "100", "3"]  # the header, then worst first, 2 before 10


# ------------------------------------------------------------------------- stopped early


def _stopped(report: GateReport, *, settled: bool) -> GateReport:
    from evalkit.gate.model import StoppedEarly

    reason = "every check settled (anytime-valid)" if settled else "max_cases (200) reached"
    stop = StoppedEarly(140, 1_000, reason, settled, undecided=() if settled else ("x",))
    return dataclasses.replace(report, stopped_early=stop)


@pytest.mark.parametrize(
    ("build", "settled", "box"),
    [
        (passing, True, "NOTE"),  # the gate ran as asked and every check settled
        (failing, True, "NOTE"),
        (passing, False, "WARNING"),  # a budget ran out first: incomplete
        (no_baseline, True, "WARNING"),  # something else needs the reader's attention
    ],
)
def test_a_settled_early_stop_is_a_note_and_anything_else_a_warning(
    build: Callable[[], GateReport], settled: bool, box: str
) -> None:
    text = render_markdown(_stopped(build(), settled=settled), config_name="c")
    assert f"> [!{box}]" in text
    assert "140/1,000 cases (stopped early)" in text
    assert ("[!NOTE]" in text) == (box == "NOTE")
