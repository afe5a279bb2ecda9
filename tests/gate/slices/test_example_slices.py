"""examples/slices: the aggregate passes, the billing slice fails the gate; `compare --by`
prints the same slice figures for the same runs."""

from __future__ import annotations

import json
from pathlib import Path

from evalkit._util.pvalues import pvalue
from helpers.cli import evalkit

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "slices"


def test_the_example_fails_on_the_billing_slice_with_the_aggregate_passing(
    tmp_path: Path,
) -> None:
    out, report = tmp_path / "run.json", tmp_path / "report.json"
    result = evalkit(
        "gate", "--config", "evalkit.yaml", "--out", out, "--json", report, cwd=EXAMPLE
    )
    assert result.returncode == 1, result.stdout + result.stderr
    data = json.loads(report.read_text())
    status = {c["id"]: c["status"] for c in data["checks"]}
    assert status["no_ndcg_regression"] == "pass"
    assert status["no_slice_regression"] == "fail"
    regressed = [v["slice"] for v in data["slices"]["verdicts"] if v["status"] == "regressed"]
    assert regressed == ["tags=billing"]
    assert "tags=billing (Δ" in result.stdout

    compared = evalkit("compare", out, "baseline.json", "--by", "tags", cwd=EXAMPLE)
    assert compared.returncode == 0, compared.stderr
    rows = {
        (line.split()[1], line.split()[2]): line
        for line in compared.stdout.split("Slices: ", 1)[1].splitlines()[2:]
    }
    for v in data["slices"]["verdicts"]:
        if not v["slice"].startswith("tags="):
            continue
        line = rows[(v["metric"], v["slice"])]
        # Δ, the means and the one-sided p are the slice's own; the FDR level depends on
        # the family (compare's: these slices × every metric of the runs)
        for value in (v["delta"], v["baseline_value"], v["candidate_value"]):
            assert f"{value:.4f}".lstrip("-") in line, (value, line)
        assert f"{v['n_cases']}" in line.split()[3]
        assert pvalue(v["p_value"]) in line


def test_compare_by_over_the_gates_family_prints_every_figure_the_gate_decided(
    tmp_path: Path,
) -> None:
    # the gate's family: slices: [tags, lang] x the one per_slice metric (ndcg@10)
    out, report = tmp_path / "run.json", tmp_path / "report.json"
    gated = evalkit("gate", "--config", "evalkit.yaml", "--out", out, "--json", report, cwd=EXAMPLE)
    assert gated.returncode == 1, gated.stdout + gated.stderr
    data = json.loads(report.read_text())["slices"]

    from evalkit._spec.artifact import read_artifact
    from evalkit.gate.compare import compare_slices
    from evalkit.report.slices import slice_json

    offline = slice_json(
        compare_slices(
            read_artifact(out),
            read_artifact(EXAMPLE / "baseline.json"),
            ["tags", "lang"],
            metrics=["ndcg@10"],
        )
    )
    for key in ("dimensions", "method", "q", "min_cases", "level", "n_tested"):
        assert offline[key] == data[key], key
    figures = [
        *("slice", "metric", "status", "n_cases", "n_paired", "delta", "baseline_value"),
        *("candidate_value", "ci_low", "ci_high", "p_value", "p_adjusted", "confidence"),
    ]
    gate_rows = [{k: v.get(k) for k in figures} for v in data["verdicts"]]
    compare_rows = [{k: v.get(k) for k in figures} for v in offline["verdicts"]]
    assert compare_rows == gate_rows

    printed = evalkit(
        "compare", out, "baseline.json", "--by", "tags,lang", "--metric", "ndcg@10", cwd=EXAMPLE
    )
    assert printed.returncode == 0, printed.stderr
    table = printed.stdout.split("Slices: ", 1)[1]
    for v in data["verdicts"]:
        assert v["slice"] in table
        if v["p_adjusted"] is not None:
            assert pvalue(v["p_adjusted"]) in table, (v["slice"], table)


def test_compare_metric_needs_by_and_a_metric_both_runs_record(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    ran = evalkit("run", "--config", "evalkit.yaml", "--out", out, cwd=EXAMPLE)
    assert ran.returncode == 0, ran.stderr
    alone = evalkit("compare", out, "baseline.json", "--metric", "ndcg@10", cwd=EXAMPLE)
    assert alone.returncode == 2
    assert "add --by DIMENSION" in alone.stderr
    typo = evalkit(
        "compare", out, "baseline.json", "--by", "tags", "--metric", "ndgc@10", cwd=EXAMPLE
    )
    assert typo.returncode == 2
    assert "did you mean 'ndcg@10'" in typo.stderr
