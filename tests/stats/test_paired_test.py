"""``evalkit.paired_test`` is the gate's verdict: the same numbers in the library, compare, gate.

On the bundled example (examples/custom_client: ranker v2 against the committed v1 run),
the gate, ``evalkit compare`` and ``paired_test`` each decide every per-case metric the
gate checks; the interval ends and p are equal to the last bit, and the example script
prints them.
"""

from __future__ import annotations

import csv
import io
import json
import math
import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

import evalkit
from evalkit import ComparisonError, paired_bootstrap, paired_test, read_artifact
from evalkit._model.results import QueryResult, RunResult
from evalkit.errors import InputError
from evalkit.stats.tdist import t_quantile, t_two_sided_p
from helpers.cli import evalkit as run_evalkit

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "custom_client"


@pytest.fixture(scope="module")
def example_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, object]]:
    """The gate on the example: (candidate artefact, JSON report, its vs_baseline checks)."""
    out = tmp_path_factory.mktemp("example")
    done = run_evalkit(
        "gate",
        "-c",
        EXAMPLE / "evalkit.yaml",
        "--baseline",
        EXAMPLE / "baseline.json",
        "--out",
        out / "cand.json",
        "--json",
        out / "report.json",
        cwd=out,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((out / "report.json").read_text())
    checks = {c["metric"]: c["comparison"] for c in report["checks"] if c["comparison"]}
    return out / "cand.json", out / "report.json", checks


def test_gate_compare_and_paired_test_give_identical_numbers(
    example_runs: tuple[Path, Path, dict[str, dict[str, float]]],
) -> None:
    cand_path, _, checks = example_runs
    assert {"ndcg@10", "recall@5"} <= set(checks)
    listed = run_evalkit(
        "compare", cand_path, EXAMPLE / "baseline.json", "--format", "csv", cwd=cand_path.parent
    )
    assert listed.returncode == 0, listed.stderr
    rows = {r["metric"]: r for r in csv.DictReader(io.StringIO(listed.stdout))}
    cand, base = read_artifact(cand_path), read_artifact(EXAMPLE / "baseline.json")
    for metric, gate in checks.items():
        mine = paired_test(cand, base, metric)
        table = rows[metric]
        assert mine.procedure == "t"
        # non-inferiority checks test Δ = −margin; their interval is the same
        assert (mine.observed, mine.ci_low, mine.ci_high) == (
            gate["delta"],
            gate["ci_low"],
            gate["ci_high"],
        )
        assert (mine.observed, mine.ci_low, mine.ci_high, mine.p_value) == (
            float(table["delta"]),
            float(table["ci_low"]),
            float(table["ci_high"]),
            float(table["p_value"]),
        )
        if gate["tested_value"] == 0.0:
            assert mine.p_value == gate["p_value"]


def test_the_example_script_prints_the_gates_numbers(
    example_runs: tuple[Path, Path, dict[str, dict[str, float]]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, _, checks = example_runs
    gate = checks["ndcg@10"]
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "search_service", raising=False)
    runpy.run_path(str(EXAMPLE / "evaluate.py"), run_name="__main__")
    sys.modules.pop("search_service", None)
    printed = capsys.readouterr().out
    line = (
        f"ndcg@10    {gate['delta']:+.4f}  95% CI [{gate['ci_low']:+.4f}, "
        f"{gate['ci_high']:+.4f}]  p={gate['p_value']:.4f}"
    )
    assert line in printed, printed


def _run(name: str, values: dict[str, float]) -> RunResult[QueryResult]:
    return RunResult(name, [QueryResult(cid, [], {"m": float(v)}) for cid, v in values.items()])


def test_it_is_the_paired_t_interval_and_its_dual_p() -> None:
    """Known answer: Student's paired t on the per-case differences, built by hand."""
    rng = np.random.default_rng(43)
    a = rng.normal(0.5, 0.2, 25)
    b = a - rng.normal(0.03, 0.1, 25)
    ids = [f"q{i:02d}" for i in range(25)]
    run_a = _run("a", dict(zip(ids, a, strict=True)))
    res = paired_test(run_a, _run("b", dict(zip(ids, b, strict=True))), "m")
    d = a - b
    se = float(np.std(d, ddof=1)) / math.sqrt(25)
    half = t_quantile(0.975, 24) * se
    assert res.observed == pytest.approx(float(d.mean()), abs=1e-12)
    assert res.ci_low == pytest.approx(float(d.mean()) - half, abs=1e-12)
    assert res.ci_high == pytest.approx(float(d.mean()) + half, abs=1e-12)
    assert res.p_value == pytest.approx(t_two_sided_p(float(d.mean()) / se, 24), abs=1e-12)
    assert res.significant == (res.p_value <= 0.05) == (res.ci_low > 0 or res.ci_high < 0)
    assert (res.decided_by, res.n, res.method) == ("paired t", 25, "auto")


def test_pairs_by_id_and_takes_a_minus_b() -> None:
    a = _run("a", {"x": 0.9, "y": 0.4, "z": 0.7})
    b = _run("b", {"z": 0.5, "x": 0.6, "y": 0.5})
    forward, backward = paired_test(a, b, "m"), paired_test(b, a, "m")
    assert forward.observed == pytest.approx((0.3 - 0.1 + 0.2) / 3, abs=1e-12)
    assert forward.observed == -backward.observed
    assert (forward.ci_low, forward.ci_high) == (-backward.ci_high, -backward.ci_low)
    assert forward.p_value == backward.p_value


def test_named_methods_decide_as_the_gate_would() -> None:
    rng = np.random.default_rng(7)
    ids = [f"c{i}" for i in range(30)]
    a = _run("a", dict(zip(ids, rng.normal(0, 1, 30), strict=True)))
    b = _run("b", dict(zip(ids, rng.normal(0, 1, 30), strict=True)))
    auto, t = paired_test(a, b, "m", method="auto"), paired_test(a, b, "m", method="t")
    assert (auto.ci_low, auto.ci_high, auto.p_value) == (t.ci_low, t.ci_high, t.p_value)
    boot = paired_test(a, b, "m", method="bootstrap")
    spec = paired_bootstrap(a, b, "m")  # the percentile interval is the spec's, to the bit
    assert (boot.ci_low, boot.ci_high, boot.procedure) == (spec.ci_low, spec.ci_high, "bootstrap")
    assert paired_test(a, b, "m", method="permutation").procedure == "permutation"
    with pytest.raises(InputError, match="unknown method"):
        paired_test(a, b, "m", method="skew-t")
    with pytest.raises(InputError, match="alpha"):
        paired_test(a, b, "m", alpha=1.5)


def test_refuses_what_paired_bootstrap_refuses() -> None:
    a = _run("a", {"x": 0.9, "y": 0.4})
    with pytest.raises(ComparisonError):
        paired_test(a, _run("b", {"x": 0.5, "w": 0.5}), "m")


def test_is_public() -> None:
    assert evalkit.paired_test is paired_test
    from evalkit import significance

    assert significance.paired_test is paired_test
    res = paired_test(_run("a", {"x": 1.0, "y": 0.5}), _run("b", {"x": 0.5, "y": 0.5}), "m")
    with pytest.raises(AttributeError):
        res.p_value = 0.0  # type: ignore[misc]
    assert set(res.to_dict()) >= {"observed", "ci_low", "ci_high", "p_value", "significant"}
