"""Per-slice FDR control measured with known truth (issue 28), through the gate's own code.

Each trial draws a baseline and a candidate of n cases (a per-case level, normal noise
of sd 0.1 per run, so each case's difference has sd 0.1·√2), gives some slices a true
regression, and runs :func:`evalkit.gate.slices.slice_family` (what a per_slice check
calls, with the gate's default procedure) at q = 0.05.  Counted per trial: V / max(R, 1)
(false discoveries over discoveries; its mean is the FDR) and, per truly regressed slice,
whether it was found (power).

Shapes: disjoint slices (one tag per case: ``auto`` takes Benjamini-Hochberg), and
overlapping tags (each case carries 1-3 of 8 tags: ``auto`` takes Benjamini-Yekutieli;
BH forced on the same data is measured beside it).

``EVALKIT_SLICE_TRIALS=2000 uv run pytest -m slow tests/stats/test_slice_fdr_simulation.py -s``
prints the tables quoted in docs/slices.md#measured (SE ≤ 0.5 points at 2,000 trials).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np
import pytest

from evalkit import CaseResult, RunResult, TargetResponse, register_metric
from evalkit._model.slices import SliceAssignment
from evalkit.gate.slices import SliceSettings, SliceTest, slice_family

METRIC = "sim_slice_score"
register_metric(METRIC, higher_is_better=True)(lambda _r, _c: 0.0)
SD = 0.1
TRIALS = int(os.environ.get("EVALKIT_SLICE_TRIALS", "400"))


@dataclass(frozen=True)
class Cell:
    fdr: float
    se: float
    power: float  # share of the slices given a regression found (nan without any)
    method: str


def _runs(
    tags: list[list[str]], shift: dict[str, float], rng: np.random.Generator
) -> tuple[RunResult[CaseResult], RunResult[CaseResult]]:
    n = len(tags)
    level = rng.uniform(0.3, 0.7, n)
    noise = rng.standard_normal((2, n)) * SD
    # a case in a regressed slice loses that slice's shift (the largest, if several)
    move = np.array([min([shift.get(t, 0.0) for t in ts] + [0.0]) for ts in tags])
    rows = [
        [
            CaseResult(f"c{i}", TargetResponse([], latency_ms=1.0), {METRIC: float(v)})
            for i, v in enumerate(level + noise[side] + (move if side == 0 else 0.0))
        ]
        for side in (0, 1)
    ]
    return RunResult("cand", rows[0]), RunResult("base", rows[1])


def simulate(
    tags_of: list[list[str]],
    regressed: dict[str, float],
    trials: int,
    seed: int,
    method: str = "auto",
) -> Cell:
    rng = np.random.default_rng(seed)
    assignment = SliceAssignment(
        ("tags",), {f"c{i}": {"tags": tuple(t)} for i, t in enumerate(tags_of)}
    )
    # the truth per slice: the mean shift of its cases (a slice sharing cases with a
    # regressed one regresses too, by less); a discovery is false only where it is 0
    move = [min([regressed.get(t, 0.0) for t in ts] + [0.0]) for ts in tags_of]
    truth: dict[str, list[float]] = {}
    for ts, m in zip(tags_of, move, strict=True):
        for t in ts:
            truth.setdefault(t, []).append(m)
    null = {t for t, ms in truth.items() if float(np.mean(ms)) >= 0.0}
    shares, found, methods = [], [], set()
    for _ in range(trials):
        cand, base = _runs(tags_of, regressed, rng)
        test = SliceTest("sim", METRIC, True, cand, base, tuple(cand.ids()))
        report = slice_family(
            [test],
            assignment,
            SliceSettings(method=method),
            n_resamples=200,
            seed=int(rng.integers(1 << 30)),
        )
        methods.add(report.method)
        hits = [v.slice.split("=", 1)[1] for v in report.regressed()]
        false = sum(1 for h in hits if h in null)
        shares.append(false / max(1, len(hits)))
        found += [t in hits for t in regressed]
    values = np.array(shares)
    return Cell(
        float(values.mean()),
        float(values.std(ddof=1) / math.sqrt(trials)) if trials > 1 else math.nan,
        float(np.mean(found)) if found else math.nan,
        "/".join(sorted(methods)),
    )


def disjoint(slices: int, size: int) -> list[list[str]]:
    return [[f"s{j}"] for j in range(slices) for _ in range(size)]


def overlapping(n: int, k: int, seed: int) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    return [
        [f"s{j}" for j in sorted(rng.choice(k, size=int(rng.integers(1, 4)), replace=False))]
        for _ in range(n)
    ]


#: A true regression of 0.4 sd of a case's difference: found at about 80% at n = 100.
EFFECT = -0.4 * SD * math.sqrt(2.0)


def _bound(cell: Cell, limit: float) -> None:
    assert cell.fdr <= limit + 3 * cell.se + 1e-9, cell


@pytest.mark.slow
def test_disjoint_slices_global_null_holds_q() -> None:
    """Independent tests with every null true: BH's FDR (= the chance of any false
    failure) is q·m0/m = q, up to the one-sided level the procedure holds at n = 40."""
    cell = simulate(disjoint(10, 40), {}, TRIALS, seed=1)
    assert cell.method == "bh"
    _bound(cell, 0.05)


@pytest.mark.slow
def test_disjoint_slices_with_true_regressions_hold_q_and_find_them() -> None:
    cell = simulate(disjoint(10, 100), {"s0": EFFECT, "s1": EFFECT}, TRIALS, seed=2)
    assert cell.method == "bh"
    _bound(cell, 0.05 * 8 / 10)
    assert cell.power > 0.5, cell


@pytest.mark.slow
def test_overlapping_tags_take_by_and_hold_q() -> None:
    tags = overlapping(400, 8, seed=3)
    null = simulate(tags, {}, TRIALS, seed=4)
    assert null.method == "by"
    _bound(null, 0.05)
    effect = simulate(tags, {"s0": EFFECT}, TRIALS, seed=5)
    _bound(effect, 0.05)


def _table() -> None:
    """The tables of docs/slices.md (run with -s)."""
    trials = TRIALS
    print(f"\nFDR and power per scenario, q = 0.05, {trials:,} trials per cell")
    rows = [
        ("disjoint 10 × 40, global null", disjoint(10, 40), {}, "auto"),
        ("disjoint 10 × 100, 2 regressed", disjoint(10, 100), {"s0": EFFECT, "s1": EFFECT}, "auto"),
        ("overlapping 8 tags, 400 cases, null", overlapping(400, 8, 3), {}, "auto"),
        ("overlapping, null, BH forced", overlapping(400, 8, 3), {}, "bh"),
        ("overlapping, 1 regressed", overlapping(400, 8, 3), {"s0": EFFECT}, "auto"),
        ("overlapping, 1 regressed, BH forced", overlapping(400, 8, 3), {"s0": EFFECT}, "bh"),
    ]
    for i, (name, tags, regressed, method) in enumerate(rows):
        c = simulate(tags, regressed, trials, seed=100 + i, method=method)
        power = "" if math.isnan(c.power) else f", power {c.power:.1%}"
        print(f"| {name} | {c.method} | {c.fdr:.1%} ± {c.se:.1%}{power} |")
    print("\npower per slice size (one regressed slice among 10, Δ = 0.4 sd of a difference)")
    for size in (30, 50, 100, 200):
        tags = [["s0"]] * size + [[f"s{j}"] for j in range(1, 10) for _ in range(size)]
        c = simulate(tags, {"s0": EFFECT}, trials, seed=200 + size)
        print(f"| {size} | {c.power:.1%} | {c.fdr:.1%} ± {c.se:.1%} |")


@pytest.mark.slow
def test_print_tables() -> None:
    if os.environ.get("EVALKIT_SLICE_TRIALS"):
        _table()


@pytest.mark.slow
def test_gate_with_per_slice_checks_fails_falsely_no_more_than_it_prints() -> None:
    """The real gate, nothing changed: the share of gates in which the aggregate check or
    the per-slice check fails stays within the family-wise figure the report prints (a
    bound: the checks' rate plus q)."""
    from evalkit._spec.artifact import GoldensInfo, build_artifact
    from evalkit._spec.checks import CheckSpec
    from evalkit.gate.model import GateOptions
    from evalkit.gate.procedure import evaluate_gate

    tags = overlapping(300, 6, seed=9)
    assignment = SliceAssignment(
        ("tags",), {f"c{i}": {"tags": tuple(t)} for i, t in enumerate(tags)}
    )
    checks = [
        CheckSpec("whole", METRIC, vs_baseline="no_significant_regression"),
        CheckSpec("slices", METRIC, vs_baseline="no_significant_regression", per_slice=True),
    ]
    rng = np.random.default_rng(11)
    trials = max(200, TRIALS // 4)
    failed, printed = 0, []
    for _ in range(trials):
        cand, base = _runs(tags, {}, rng)
        info = GoldensInfo("set", {r.case_id: "fp" for r in cand.per_query}, assignment)
        arts = [build_artifact(run, [METRIC], goldens=info) for run in (cand, base)]
        report = evaluate_gate(
            checks, arts[0], arts[1], GateOptions(n_resamples=200, seed=int(rng.integers(1 << 30)))
        )
        failed += any(v.status == "fail" for v in report.verdicts)
        assert report.alpha_familywise is not None
        printed.append(report.alpha_familywise)
    rate = failed / trials
    se = math.sqrt(max(rate, 1 / trials) * (1 - rate) / trials)
    assert rate <= float(np.mean(printed)) + 3 * se, (rate, np.mean(printed))
