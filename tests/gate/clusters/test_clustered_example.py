"""examples/clustered_rag (issue 46): declared clusters change the verdict where they
should, and ``paired_test``, ``compare --cluster`` and the gate print the same figures."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from evalkit import paired_test, read_artifact
from evalkit.errors import InputError
from helpers.cli import evalkit

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "clustered_rag"


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object], str]:
    tmp = tmp_path_factory.mktemp("clustered")
    out, report = tmp / "run.json", tmp / "report.json"
    done = evalkit("gate", "--config", "evalkit.yaml", "--out", out, "--json", report, cwd=EXAMPLE)
    assert done.returncode == 0, done.stdout + done.stderr
    check = json.loads(report.read_text())["checks"][0]
    return out, check, done.stdout


def test_declared_clusters_pass_what_independent_cases_fail(
    gated: tuple[Path, dict[str, object], str], tmp_path: Path
) -> None:
    _, check, stdout = gated
    comparison = check["comparison"]
    assert isinstance(comparison, dict)
    assert check["status"] == "pass"
    assert comparison["procedure"] == "cluster-t"
    assert (comparison["clusters"], comparison["own_clusters"]) == (36, 0)
    assert "Every check covered all 269 cases in 36 clusters." in stdout
    assert "269 cases in 36 clusters by metadata.doc_id" in stdout
    # the same runs as if the questions were independent: a false regression
    report = tmp_path / "report.json"
    done = evalkit("gate", "--config", "evalkit-unclustered.yaml", "--json", report, cwd=EXAMPLE)
    assert done.returncode == 1, done.stdout + done.stderr
    plain = json.loads(report.read_text())["checks"][0]
    assert plain["status"] == "fail"
    assert plain["comparison"]["procedure"] == "t"
    assert plain["comparison"]["clusters"] is None
    # the clustered interval is wider: questions about one document move together
    width = comparison["ci_high"] - comparison["ci_low"]
    assert width > 1.5 * (plain["comparison"]["ci_high"] - plain["comparison"]["ci_low"])


def test_paired_test_compare_and_the_gate_agree(
    gated: tuple[Path, dict[str, object], str],
) -> None:
    out, check, _ = gated
    comparison = check["comparison"]
    assert isinstance(comparison, dict)
    cand, base = read_artifact(out), read_artifact(EXAMPLE / "baseline.json")
    by_field = paired_test(cand, base, "ndcg@10", clusters="metadata.doc_id")
    assert cand.goldens is not None
    assert cand.goldens.clusters is not None
    by_mapping = paired_test(cand, base, "ndcg@10", clusters=dict(cand.goldens.clusters.members))
    for result in (by_field, by_mapping):
        assert result.procedure == "cluster-t"
        assert (result.clusters, result.own_clusters) == (36, 0)
        assert (result.ci_low, result.ci_high) == (comparison["ci_low"], comparison["ci_high"])
        assert result.p_value == comparison["p_value"]
        assert result.significant is False
    done = evalkit(
        "compare",
        out,
        "baseline.json",
        "--cluster",
        "metadata.doc_id",
        "--format",
        "csv",
        cwd=EXAMPLE,
    )
    assert done.returncode == 0, done.stderr
    row = next(r for r in csv.DictReader(io.StringIO(done.stdout)) if r["metric"] == "ndcg@10")
    assert float(row["ci_low"]) == comparison["ci_low"]
    assert float(row["ci_high"]) == comparison["ci_high"]
    assert float(row["p_value"]) == comparison["p_value"]
    assert row["direction"] == "no detectable change"
    # without --cluster, compare reads the questions as independent, as the gate would
    plain = evalkit("compare", out, "baseline.json", "--format", "csv", cwd=EXAMPLE)
    row = next(r for r in csv.DictReader(io.StringIO(plain.stdout)) if r["metric"] == "ndcg@10")
    assert row["direction"] != "no detectable change"


def test_a_cluster_field_no_run_carries_is_refused(
    gated: tuple[Path, dict[str, object], str],
) -> None:
    out, _, _ = gated
    done = evalkit("compare", out, "baseline.json", "--cluster", "doc", cwd=EXAMPLE)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1
    assert "'doc'" in lines[0]
    assert "metadata.doc_id" in lines[0]
    cand, base = read_artifact(out), read_artifact(EXAMPLE / "baseline.json")
    with pytest.raises(InputError, match="cluster field 'doc'"):
        paired_test(cand, base, "ndcg@10", clusters="doc")


def test_power_by_cluster_detects_what_the_gate_says(
    gated: tuple[Path, dict[str, object], str],
) -> None:
    out, check, _ = gated
    comparison = check["comparison"]
    assert isinstance(comparison, dict)
    from evalkit.stats.cluster_power import cluster_power_table

    cand, base = read_artifact(out), read_artifact(EXAMPLE / "baseline.json")
    assert cand.goldens is not None
    assert cand.goldens.clusters is not None
    table = cluster_power_table(
        cand.result,
        base.result,
        metric="ndcg@10",
        clusters=cand.goldens.clusters.members,
        n_sim=200,
    )
    assert table.mde == pytest.approx(comparison["mde"], rel=1e-12)
    at_mde = next(row for row in table.rows if row.effect == pytest.approx(table.mde))
    assert at_mde.analytic == pytest.approx(0.8, abs=0.02)
    assert at_mde.simulated is not None
    assert 0.65 <= at_mde.simulated <= 0.95
    done = evalkit("power", out, "--metric", "ndcg@10", "--cluster", "metadata.doc_id", cwd=EXAMPLE)
    assert done.returncode == 2
    assert "needs the BASELINE" in done.stderr
