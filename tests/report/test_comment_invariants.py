"""The comment says what the JSON report says, on many real gates, and loses nothing that
a reviewer needs about a failure.

Each gate is a real :func:`evaluate_gate` over generated runs (sizes, shifts, ties,
thresholds, modes, margins, corrections, levels and a missing baseline all drawn from
a seeded generator). The comment is parsed as GitHub parses it (cmark-gfm) and every
row of its checks tables is read back: its status word, Δ, interval bounds and p must
be the JSON's, to the digits shown.
"""

from __future__ import annotations

import json
import random
import re
from html.parser import HTMLParser
from typing import Any

import pytest

from evalkit._model.results import CaseResult, RunResult
from evalkit._spec.artifact import RunArtifact, metric_info
from evalkit._spec.checks import CheckSpec, Level
from evalkit.gate.model import GateOptions, GateReport
from evalkit.gate.procedure import evaluate_gate
from evalkit.report import dumps, render_markdown
from evalkit.report.markdown import GITHUB_LIMIT

from . import github_render as G
from .samples import many

WORDS = {"no-baseline": "no baseline", "no-reference": "no reference"}
NUMBER = r"([-+]?\d+\.\d{4}|[-+]?\d\.\d{3}e[-+]\d+|n/a)"
DELTA = re.compile(rf"Δ {NUMBER} \[{NUMBER}, {NUMBER}\]")
P = re.compile(r"(p|p vs margin|Holm-adjusted p|max-T-adjusted p)(=|<)(\d\.\d{4}|n/a)$")


class _Cells(HTMLParser):
    """Every table's rows as lists of cell text, and all visible text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[str]]] = []
        self.text: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        # As a reader copies it: no-break spaces are spaces, word joiners are nothing.
        data = data.replace("\xa0", " ").replace("\u2060", "")
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def _parse(markdown: str) -> _Cells:
    cells = _Cells()
    cells.feed(G.to_html(markdown))
    cells.close()
    return cells


def _check_rows(cells: _Cells) -> dict[str, dict[str, str]]:
    """The rows of the checks tables (headed ``status``), by check id."""
    rows: dict[str, dict[str, str]] = {}
    for table in cells.tables:
        head = ["result" if h.startswith("result") else h for h in table[0]]
        if head[:2] != ["status", "check"]:
            continue
        for row in table[1:]:
            named = dict(zip(head, row, strict=True))
            assert named["check"] not in rows, named["check"]
            rows[named["check"]] = named
    return rows


def _artifact(name: str, values: dict[str, list[float]]) -> RunArtifact:
    n = len(next(iter(values.values())))
    rows = [CaseResult(f"q{i:03d}", None, {m: v[i] for m, v in values.items()}) for i in range(n)]
    return RunArtifact(
        result=RunResult(name, rows),
        path="target",
        metrics={m: metric_info(m) for m in values},
        evalkit_version="0.3.0",
        created_at="2026-11-30T12:00:00Z",
        git_commit="abcdef0123456789",
    )


METRICS = ("ndcg@10", "recall@10", "mrr@10")


def _gate(seed: int) -> GateReport:
    rng = random.Random(seed)
    n = rng.choice([8, 12, 20, 40, 80])
    base: dict[str, list[float]] = {}
    cand: dict[str, list[float]] = {}
    for m in METRICS:
        shift = rng.choice([0.0, 0.0, -0.02, -0.1, 0.05])
        b = [round(rng.random(), 4) for _ in range(n)]
        ties = rng.random()
        base[m] = b
        cand[m] = [
            v if rng.random() < ties else round(min(max(v + shift + rng.gauss(0, 0.1), 0), 1), 4)
            for v in b
        ]
    checks = []
    for i in range(rng.randint(2, 7)):
        m = rng.choice(METRICS)
        level: Level = rng.choice(["block", "block", "warn"])
        kind = rng.choice(["threshold", "regression", "non_inferiority"])
        if kind == "threshold":
            spec = CheckSpec(
                id=f"c{i}_floor", metric=m, op=">=", threshold=rng.choice([0.3, 0.5, 0.6]),
                level=level,
            )  # fmt: skip
        elif kind == "regression":
            spec = CheckSpec(
                id=f"c{i}_holds", metric=m, vs_baseline="no_significant_regression", level=level
            )
        else:
            spec = CheckSpec(
                id=f"c{i}_non_inferior", metric=m, vs_baseline="non_inferiority",
                margin=rng.choice([0.01, 0.05]), level=level,
            )  # fmt: skip
        checks.append(spec)
    baseline = None if rng.random() < 0.15 else _artifact("main", base)
    options = GateOptions(n_resamples=400, seed=seed, correction=rng.choice(["none", "holm"]))
    return evaluate_gate(checks, _artifact("pr", cand), baseline, options)


def _close(shown: str, value: float | None) -> bool:
    """A printed number is the JSON's, rounded the way it reads."""
    if shown == "n/a":
        return value is None
    assert value is not None
    tolerance = 5e-5 if "e" not in shown else abs(value) * 5e-4
    return abs(float(shown) - value) <= tolerance + 1e-12


def _agrees(row: dict[str, str], check: dict[str, Any]) -> None:
    status = check["status"]
    word = WORDS.get(status, status)
    assert row["status"].split(" ", 1)[1].startswith(word), (row, status)
    comparison = check["comparison"]
    if comparison is None:
        assert "Δ" not in row["result"]
        assert row.get("p", "") == ""
        return
    m = DELTA.search(row["result"])
    assert m is not None, row
    for shown, key in zip(m.groups(), ("delta", "ci_low", "ci_high"), strict=True):
        assert _close(shown, comparison[key]), (shown, key, comparison[key])
    p = P.match(row["p"])
    assert p is not None, row["p"]
    label, relation, digits = p.groups()
    assert label == comparison["p_label"]
    deciding = comparison["deciding_p"]
    if relation == "<":
        assert deciding < 0.00005
        assert digits == "0.0001"
    else:
        assert _close(digits, deciding), (digits, deciding)


SEEDS = range(40)


@pytest.mark.parametrize("seed", SEEDS)
def test_every_row_agrees_with_the_json_report(seed: int) -> None:
    report = _gate(seed)
    data = json.loads(dumps(report))
    cells = _parse(render_markdown(report, config_name="evalkit"))
    rows = _check_rows(cells)
    assert sorted(rows) == sorted(c["id"] for c in data["checks"])
    for check in data["checks"]:
        _agrees(rows[check["id"]], check)


@pytest.mark.parametrize("seed", SEEDS)
def test_nothing_about_a_failure_is_lost(seed: int) -> None:
    """For every check that did not pass: its id, its message, its worst cases and its
    statistical warnings are in the comment, as text a reader sees."""
    report = _gate(seed)
    data = json.loads(dumps(report))
    text = " ".join("".join(_parse(render_markdown(report, config_name="e")).text).split())
    for check in data["checks"]:
        if check["status"] == "pass":
            continue
        assert check["id"] in text
        if check["status"] not in ("no-baseline", "no-reference"):  # said once, above
            assert " ".join(check["message"].split()) in text, check["message"]
        for case in check["worst_cases"]:
            assert f"{case['case_id']} " in text
        for warning in (check["comparison"] or {}).get("warnings", []):
            assert warning.split(":", 1)[0] in text


def test_the_generator_covers_the_states() -> None:
    """The generated gates reach every status and p label the rows are checked on."""
    statuses, labels = set(), set()
    for seed in SEEDS:
        for check in json.loads(dumps(_gate(seed)))["checks"]:
            statuses.add(check["status"])
            if check["comparison"] is not None:
                labels.add(check["comparison"]["p_label"])
    assert {"pass", "fail", "warn", "no-baseline"} <= statuses
    assert {"p", "p vs margin", "Holm-adjusted p"} <= labels


@pytest.mark.parametrize("id_len", [20, 80, 120])
def test_200_checks_stay_under_the_limit_and_keep_every_failure(id_len: int) -> None:
    report = many(200, id_len=id_len)
    markdown = render_markdown(report, config_name="evalkit")
    assert len(markdown) < GITHUB_LIMIT
    rows = _check_rows(_parse(markdown))
    data = json.loads(dumps(report))
    for check in data["checks"]:
        if check["status"] != "pass":
            _agrees(rows[_shown(check["id"])], check)


def _shown(check_id: str) -> str:
    """An id as the comment writes it: past 80 characters, cut with an ellipsis (so a
    hostile id cannot eat the budget); the JSON report has it whole."""
    return check_id if len(check_id) <= 80 else check_id[:79] + "…"


@pytest.mark.parametrize("margin", [0.002, 0.008, 0.015])
def test_a_margin_too_tight_says_the_json_reports_figures_beside_its_check(
    margin: float,
) -> None:
    """The advice's rate and fix in the comment and the terminal are the JSON's."""
    from evalkit.report.terminal import render_terminal

    from .test_comment_size import _artifact

    rng = random.Random(int(margin * 1000))
    base = [round(rng.random(), 4) for _ in range(300)]
    cand = [
        v if rng.random() < 0.7 else round(min(max(v + rng.gauss(0, 0.2), 0), 1), 4) for v in base
    ]
    check = CheckSpec("ni", "ndcg@10", vs_baseline="non_inferiority", margin=margin)
    report = evaluate_gate(
        [check],
        _artifact("c", {"ndcg@10": cand}),
        _artifact("b", {"ndcg@10": base}),
        GateOptions(n_resamples=200),
    )
    advice = json.loads(dumps(report))["checks"][0]["margin_advice"]
    assert advice is not None
    figures = (
        f"fails this check {advice['rate'] * 100:.1f}% of the time",
        f"(its level allows {advice['allowed'] * 100:.1f}%)",
        f"at least {advice['fix_margin']:g} or at least {advice['fix_cases']:,} cases",
    )
    comment = " ".join("".join(_parse(render_markdown(report, config_name="e")).text).split())
    terminal = " ".join((render_terminal(report, capture=True, width=80) or "").split())
    for figure in figures:
        assert figure in comment, figure
        assert figure in terminal, figure
