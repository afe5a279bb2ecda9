"""examples/slices: the aggregate passes, the billing slice fails the gate; `compare --by`
prints the same slice figures for the same runs."""

from __future__ import annotations

import json
from pathlib import Path

from evalkit._util.pvalues import pvalue
from helpers.cli import evalkit

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "slices"


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
