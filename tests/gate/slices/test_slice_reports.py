"""Per-slice figures in every report format, and `evalkit compare --by` printing the same."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import jsonschema

from evalkit._spec.artifact import write_artifact
from evalkit._spec.checks import CheckSpec
from evalkit.gate.model import GateOptions, GateReport
from evalkit.gate.procedure import evaluate_gate
from evalkit.report import render_html, render_markdown
from evalkit.report.json_report import dumps
from evalkit.report.slices import HEADERS, slice_cells
from evalkit.report.terminal import render_terminal
from helpers.cli import evalkit
from helpers.slice_runs import METRIC, story

PER_SLICE = CheckSpec("by_slice", METRIC, vs_baseline="no_significant_regression", per_slice=True)
OPTIONS = GateOptions(n_resamples=500, seed=1)


def _report() -> GateReport:
    cand, base, _ = story()
    return evaluate_gate([PER_SLICE], cand, base, OPTIONS)


def test_json_carries_every_slice_and_validates() -> None:
    report = _report()
    data = json.loads(dumps(report))
    schema = json.loads(
        resources.files("evalkit.report").joinpath("gate-report.schema.json").read_text()
    )
    jsonschema.Draft202012Validator(schema).validate(data)
    assert report.slices is not None
    assert [v["slice"] for v in data["slices"]["verdicts"]] == [
        v.slice for v in report.slices.verdicts
    ]
    assert data["slices"]["method"] == "by"
    assert "tags=rare" in {v["slice"] for v in data["slices"]["verdicts"]}


def test_terminal_lists_every_slice() -> None:
    text = render_terminal(_report(), capture=True, width=200)
    assert text is not None
    for name in ("tags=billing", "tags=search", "tags=long", "tags=rare", "tags=new"):
        assert name in text
    assert "too small, not tested" in text
    assert "Benjamini-Yekutieli" in text


def test_pr_comment_shows_only_the_slices_that_moved() -> None:
    report = _report()
    assert report.slices is not None
    moved = {v.slice for v in report.slices.verdicts if v.moved}
    still = {v.slice for v in report.slices.verdicts if not v.moved}
    assert "tags=billing" in moved
    assert "tags=rare" in still
    text = render_markdown(report, config_name="demo")
    section = text.split("**Slices**", 1)[1]
    assert f"{len(moved)} of {report.slices.n_tested} slice test(s) moved" in section
    for name in moved:
        assert name in section
    for name in still:
        assert name not in section


def test_html_draws_a_forest_of_the_tested_slices() -> None:
    page = render_html(_report())
    section = page.split("<h2>Slices: Δ with its FDR-level interval</h2>", 1)[1]
    assert section.lstrip().startswith('<div class="forest-plot">')
    assert "tags=billing (by_slice)" in section
    assert "FDR-adjusted p" in section


def test_compare_by_prints_the_gate_slice_figures(tmp_path: Path) -> None:
    cand, base, _ = story()
    write_artifact(cand, tmp_path / "cand.json")
    write_artifact(base, tmp_path / "base.json")
    report = evaluate_gate([PER_SLICE], cand, base, GateOptions())  # compare's defaults
    assert report.slices is not None
    result = evalkit("compare", "cand.json", "base.json", "--by", "tags", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    printed = result.stdout.split("Slices: ", 1)[1].splitlines()[2:]
    assert len(printed) == len(report.slices.verdicts)
    for line, v in zip(printed, report.slices.verdicts, strict=True):
        # every figure but the check column (compare has no checks: it names the metric)
        cells = slice_cells(v)[1:]
        assert line.split()[1:4] == [cells[0], cells[1], cells[2]]
        for cell in cells[3:]:
            assert cell in line, (cell, line)
    assert HEADERS[-1] in result.stdout


def test_compare_by_refusals_are_one_line(tmp_path: Path) -> None:
    cand, base, _ = story()
    write_artifact(cand, tmp_path / "cand.json")
    write_artifact(base, tmp_path / "base.json")
    typo = evalkit("compare", "cand.json", "base.json", "--by", "tag", cwd=tmp_path)
    assert typo.returncode == 2
    assert "did you mean 'tags'?" in typo.stderr
    bare = evalkit("compare", "base.json", "cand.json", "--by", "tags", cwd=tmp_path)
    assert bare.returncode == 2
    assert "records no slice assignment" in bare.stderr
    fmt = evalkit(
        "compare", "cand.json", "base.json", "--by", "tags", "--format", "csv", cwd=tmp_path
    )
    assert fmt.returncode == 2
    assert "text format" in fmt.stderr


def test_the_terminal_at_80_columns_keeps_every_slice_figure_whole() -> None:
    report = _report()
    assert report.slices is not None
    wide = render_terminal(report, capture=True, width=200)
    narrow = render_terminal(report, capture=True, width=80)
    assert wide is not None
    assert narrow is not None
    assert "FDR-adjusted p" in wide  # the table, where it fits
    lines = narrow.splitlines()
    for v in report.slices.verdicts:
        cells = slice_cells(v)
        start = lines.index(next(line for line in lines if line.startswith(f"{v.slice}  ")))
        block = lines[start : start + 3]
        assert max(len(line) for line in block) <= 80, block
        assert cells[10] in block[0]
        shown = " ".join(block)
        for figure in cells[4:10]:  # baseline, candidate, Δ, interval, p, adjusted p
            if figure != "—":  # the bad side's p beside "improved": not shown
                assert figure in shown, (figure, block)
