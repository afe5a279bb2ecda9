"""Figures the reports print about rates are the ones docs/calibration.md measured.

A verdict's details quote why the bootstrap does not decide, and a refused latency_p95
check quotes how often its bootstrap would fail falsely.  Those sentences are
constants; a calibration run that moves a figure must move the sentence too, so this
reads the figures off the generated tables instead of trusting the constant.
"""

from __future__ import annotations

import re
from pathlib import Path

from evalkit.stats.diagnostics import (
    BOOTSTRAP_SMALL_N_FIGURES,
    NO_WIN_FIGURES,
    SKEW_LIMIT_FIGURES,
    SMALL_N_FIGURES,
)
from evalkit.stats.procedures import BOOTSTRAP_NOT_DECIDING, MAXIMUM_FIGURES

DOC = Path(__file__).resolve().parents[2] / "docs" / "calibration.md"
# Reported for honesty, claimed by no procedure (the doc's shape list says so): the
# strongly skewed shapes are the default's measured limit.
OUTSIDE_THE_CLAIMS = {
    "skewed+ties",
    "rare-large-win",
    "right-skewed",
    "left-skewed",
    "bounded-right",
    "bounded-left",
    "bimodal-70/30",
}


def _table_after(heading: str) -> list[list[str]]:
    lines = DOC.read_text(encoding="utf-8").splitlines()
    start = lines.index(heading)
    rows: list[list[str]] = []
    for line in lines[start + 1 :]:
        if line.startswith("#"):
            break
        if line.startswith("|") and not line.startswith("|---"):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def _cells(procedure: str, shapes: set[str] | None = None) -> dict[tuple[str, int], float]:
    """Per (shape, n): the larger of the two one-sided false-fail rates.

    ``shapes`` None means every claimed shape (the doc's list minus those outside it).
    """
    head, *body = _table_after(f"#### `{procedure}`")
    worst: dict[tuple[str, int], float] = {}
    for row in body:
        claimed = row[0] not in OUTSIDE_THE_CLAIMS if shapes is None else row[0] in shapes
        for column, cell in zip(head[1:], row[1:], strict=True):
            rates = re.match(r"([\d.]+) / ([\d.]+)", cell)
            if claimed and rates is not None:
                worst[row[0], int(column.removeprefix("n = "))] = max(
                    float(rates[1]), float(rates[2])
                )
    return worst


def _worst_false_fail(procedure: str, n: int) -> tuple[float, str]:
    """The larger of the two one-sided rates, over the claimed shapes, at ``n``."""
    return max((rate, shape) for (shape, at), rate in _cells(procedure).items() if at == n)


def test_why_the_bootstrap_does_not_decide_quotes_the_measured_rates() -> None:
    sentence = BOOTSTRAP_NOT_DECIDING
    assert "at n = 30" in sentence
    percentile, _ = _worst_false_fail("bootstrap", 30)
    studentized, _ = _worst_false_fail("studentized", 30)
    default, _ = _worst_false_fail("t", 30)
    assert re.findall(r"[\d.]+%", sentence) == [
        f"{percentile}%",
        f"{studentized}%",
        "2.5%",
        f"{default}%",
    ], sentence


def test_the_refused_aggregate_quotes_the_measured_range() -> None:
    rows = _table_after("## Small-n aggregates: latency_p95")[1:]
    quoted = re.fullmatch(
        r"(\d+)-(\d+)% one-sided against 2\.5% at n = (\d+)-(\d+)", MAXIMUM_FIGURES
    )
    assert quoted is not None, MAXIMUM_FIGURES
    # p95 is the maximum below 20 cases: the range is over every cell of those rows
    small = [row for row in rows if int(row[0]) < 20]
    rates = [float(rate) for row in small for cell in row[1:] for rate in cell.split(" / ")]
    assert (int(quoted[1]), int(quoted[2])) == (round(min(rates)), round(max(rates)))
    assert (int(quoted[3]), int(quoted[4])) == (int(small[0][0]), int(small[-1][0]))


def test_the_small_n_warning_quotes_the_measured_range() -> None:
    claimed = [rate for (_, n), rate in _cells("t").items() if 10 <= n <= 20]
    ties = [rate for (_, n), rate in _cells("t", {"skewed+ties"}).items() if 10 <= n <= 20]
    assert re.findall(r"[\d.-]+%", SMALL_N_FIGURES) == [
        f"{min(claimed)}-{max(claimed)}%",
        "2.5%",
        f"{max(ties)}%",
    ], SMALL_N_FIGURES
    assert "at n = 10-20" in SMALL_N_FIGURES


def test_the_small_n_bootstrap_warning_quotes_the_measured_rates() -> None:
    assert re.findall(r"([\d.]+)% (?:against 2\.5% )?at n = (\d+)", BOOTSTRAP_SMALL_N_FIGURES) == [
        (str(_worst_false_fail("bootstrap", n)[0]), str(n)) for n in (15, 30)
    ], BOOTSTRAP_SMALL_N_FIGURES


def test_the_no_win_warning_quotes_the_rare_large_win_table() -> None:
    rows = {
        int(row[0]): row for row in _table_after("## A rare large win (outside the claims)")[1:]
    }
    quoted = re.search(r"([\d /%]+) false fails at n = ([\d /]+),", NO_WIN_FIGURES)
    assert quoted is not None, NO_WIN_FIGURES
    rates = [int(x) for x in quoted[1].replace("%", "").split("/")]
    sizes = [int(x) for x in quoted[2].split("/")]
    assert rates == [round(float(rows[n][1])) for n in sizes], NO_WIN_FIGURES
    # "every one of them on a sample with no win"
    assert all(rows[n][2] == "100.0" for n in sizes)


def test_the_skew_warning_quotes_the_strongly_skewed_limit() -> None:
    rows = {
        row[0]: row
        for row in _table_after("## Strongly skewed differences: the default's measured limit")[1:]
    }
    head = _table_after("## Strongly skewed differences: the default's measured limit")[0]
    from30 = [
        float(cell)
        for name in ("right-skewed", "left-skewed")
        for column, cell in zip(head[1:], rows[name][1:], strict=True)
        if cell != "—" and int(column.removeprefix("n = ")) >= 30
    ]
    assert re.findall(r"[\d.]+%", SKEW_LIMIT_FIGURES) == [f"{max(from30)}%", "2.5%"], (
        SKEW_LIMIT_FIGURES
    )
