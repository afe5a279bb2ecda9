"""Repeated trials: means over trials, cases stay the unit (level held, power rises with k)."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

from evalkit import CallableTarget, GoldenCase, GoldenSet, register_metric
from evalkit._engine.trials import evaluate_repeated, merge_case, trial_notes, trial_spread
from evalkit._model import registry
from evalkit._model.results import CaseResult, RunResult
from evalkit.errors import InputError
from evalkit.targets.base import TargetResponse
from helpers.artefact_docs import load_artefact
from helpers.cli import evalkit, write_files


def run(values: dict[str, float], name: str = "r") -> RunResult[CaseResult]:
    return RunResult(
        name, [CaseResult(c, TargetResponse(text="x"), {"m": v}) for c, v in values.items()]
    )


def merge_trials(runs: list[RunResult[CaseResult]]) -> RunResult[CaseResult]:
    """One row per case of k runs over the same cases, as a repeated run merges them."""
    rows = [merge_case(c, [r.per_query[i] for r in runs]) for i, c in enumerate(runs[0].ids())]
    return RunResult(runs[0].name, rows)


def test_merge_takes_the_mean_and_keeps_every_trial() -> None:
    merged = merge_trials(
        [run({"a": 1.0, "b": 0.0}), run({"a": 0.0, "b": 0.0}), run({"a": 1.0, "b": 0.0})]
    )
    a, b = merged.per_query
    assert a.metrics == {"m": pytest.approx(2 / 3)}
    assert b.metrics == {"m": 0.0}
    assert a.response is not None
    assert a.response.meta["trials"] == {"m": [1.0, 0.0, 1.0]}


def test_a_case_failing_in_any_trial_fails() -> None:
    bad = RunResult(
        "r",
        [
            CaseResult("a", None, {}, error="timeout"),
            CaseResult("b", TargetResponse(text="x"), {"m": 1.0}),
        ],
    )
    merged = merge_trials([run({"a": 1.0, "b": 1.0}), bad])
    assert merged.per_query[0].error == "trial 2: timeout"
    assert merged.per_query[0].metrics == {}


def test_spread_by_hand() -> None:
    # Case a: trials 1, 0 (variance 0.5); case b: 1, 1 (0); case c: 0, 0 (0).
    # Mean within variance 1/6; k = 2 -> noise 1/12.  Case means 0.5, 1, 0: variance 0.25.
    # Share = (1/12) / (1/4) = 1/3; between = 1/4 - 1/12 = 1/6;
    # doubling trials: sqrt((1/6 + 1/24) / (1/4)) = sqrt(5/6).
    merged = merge_trials(
        [run({"a": 1.0, "b": 1.0, "c": 0.0}), run({"a": 0.0, "b": 1.0, "c": 0.0})]
    )
    spread = trial_spread(merged.per_query, "m")
    assert spread is not None
    assert spread.flaky == ("a",)
    assert spread.within_share == pytest.approx(1 / 3)
    assert spread.se_ratio_double_trials == pytest.approx(math.sqrt(5 / 6))
    (note,) = trial_notes(merged.per_query, ["m"])
    assert note.startswith("m: 2 trials per case, 1 of 3 case(s) flaky (a); 33% of the variance")
    assert trial_notes(run({"a": 1.0, "b": 0.0}).per_query, ["m"]) == []


def test_evaluate_repeated_invokes_each_case_k_times() -> None:
    calls: dict[str, int] = {}

    def answer(case: GoldenCase) -> str:
        calls[case.id] = calls.get(case.id, 0) + 1
        return "yes" if calls[case.id] % 2 else "no"

    @register_metric("says_yes", higher_is_better=True)
    def says_yes(response: TargetResponse, case: GoldenCase) -> float:
        return 1.0 if response.text == "yes" else 0.0

    goldens = GoldenSet(GoldenCase(id=f"c{i}", query="q") for i in range(3))
    seen: list[str] = []
    result = evaluate_repeated(
        CallableTarget(answer, name="coin"),
        goldens,
        ["says_yes"],
        repeats=3,
        on_row=lambda _i, row: seen.append(row.case_id),
    )
    assert calls == {"c0": 3, "c1": 3, "c2": 3}
    assert [row.metrics["says_yes"] for row in result.per_query] == [pytest.approx(2 / 3)] * 3
    assert seen == ["c0", "c1", "c2"]
    with pytest.raises(InputError, match="repeats"):
        evaluate_repeated(CallableTarget(answer, name="coin"), goldens, ["says_yes"], repeats=0)


# --- simulation: the case is the unit ---------------------------------------------------
#
# A stochastic target whose noise is known by construction: case i has a true pass rate
# p_i (between-case spread, uniform on [0.2, 0.8]); each trial passes with probability
# p_i + delta, drawn from the target's own random stream.  Both systems are run through
# evaluate_repeated (k trials per case, merged into case means), and the verdict is the
# gate's own deciding procedure (DEFAULT_GATE_METHOD, two-sided 95% interval excluding 0).
# Under the null (delta = 0) both systems share every p_i, so a valid procedure flags a
# change about alpha of the time whatever k is; with delta > 0 the power rises with k
# because the trial noise in each case mean shrinks.  EVALKIT_CALIBRATION=full runs 2000
# simulations per cell instead of 300.

FULL_CALIBRATION = os.environ.get("EVALKIT_CALIBRATION", "").lower() == "full"
ALPHA = 0.05


def _passes(response: TargetResponse, case: GoldenCase) -> float:
    return 1.0 if response.text == "pass" else 0.0


def _simulate(k: int, delta: float, sims: int, n: int, seed: int) -> float:
    """The share of ``sims`` runs in which the gate's procedure flags a change."""
    from evalkit.stats.clustered_decide import evaluator_by_cluster
    from evalkit.stats.procedures import DEFAULT_GATE_METHOD

    rng = np.random.default_rng(seed)
    goldens = GoldenSet(GoldenCase(id=f"c{i}", query="q") for i in range(n))

    def system(rates: dict[str, float], name: str) -> CallableTarget:
        def answer(case: GoldenCase) -> str:
            return "pass" if rng.random() < rates[case.id] else "fail"

        return CallableTarget(answer, name=name)

    flagged = 0
    with registry.isolated():
        register_metric("passes", higher_is_better=True)(_passes)
        for s in range(sims):
            p = rng.uniform(0.2, 0.8, size=n)
            base = dict(zip(goldens.ids(), p.tolist(), strict=True))
            cand = dict(zip(goldens.ids(), np.clip(p + delta, 0, 1).tolist(), strict=True))
            a = evaluate_repeated(system(cand, "a"), goldens, ["passes"], repeats=k)
            b = evaluate_repeated(system(base, "b"), goldens, ["passes"], repeats=k)
            evaluator, _ = evaluator_by_cluster(a, b, "passes", method=DEFAULT_GATE_METHOD, seed=s)
            decision = evaluator.decide(ALPHA)
            flagged += decision.low > 0 or decision.high < 0
    return flagged / sims


@pytest.mark.slow
def test_level_holds_with_one_and_five_trials_and_power_rises_with_k() -> None:
    sims, n = (2000 if FULL_CALIBRATION else 300), 60
    se = math.sqrt(ALPHA * (1 - ALPHA) / sims)
    fpr_1 = _simulate(1, 0.0, sims, n, seed=1)
    fpr_5 = _simulate(5, 0.0, sims, n, seed=2)
    # 300 simulations at a true 5%: SE 1.26 points; 3 SE either side.
    assert abs(fpr_1 - ALPHA) <= 3 * se, fpr_1
    assert abs(fpr_5 - ALPHA) <= 3 * se, fpr_5
    power_1 = _simulate(1, 0.08, sims, n, seed=3)
    power_5 = _simulate(5, 0.08, sims, n, seed=4)
    assert power_5 > power_1 + 0.2, (power_1, power_5)


NOISY_TARGET = """
from evalkit import CallableTarget

CALLS = {}


def make_target():
    def answer(case):
        CALLS[case.id] = CALLS.get(case.id, 0) + 1
        # case a alternates between right and wrong; case b is always right
        return "Paris" if case.id == "b" or CALLS[case.id] % 2 else "Lyon"

    return CallableTarget(answer, name="noisy")
"""

REPEATED_CONFIG = """\
goldens: goldens.jsonl
checks: checks.yaml
metrics: [exact_match]
repeats: 3
target:
  python: "noisy_target:make_target"
"""


def repeated_project(root: Path) -> None:
    write_files(
        root,
        {
            "noisy_target.py": NOISY_TARGET,
            "goldens.jsonl": '{"id": "a", "query": "q?", "expected": "Paris"}\n'
            '{"id": "b", "query": "q?", "expected": "Paris"}\n',
            "checks.yaml": 'checks:\n  - {id: em, metric: exact_match, op: ">=", threshold: 0.5}\n',
            "evalkit.yaml": REPEATED_CONFIG,
        },
    )


def test_repeats_in_the_config_reports_flaky_cases(tmp_path: Path) -> None:
    repeated_project(tmp_path)
    result = evalkit("gate", "--out", "run.json", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "exact_match: 3 trials per case, 1 of 2 case(s) flaky (a)" in result.stdout
    rows = {r["id"]: r for r in load_artefact(tmp_path / "run.json")["rows"]}
    assert rows["a"]["metrics"]["exact_match"] == pytest.approx(2 / 3)
    assert rows["b"]["metrics"]["exact_match"] == 1.0


def test_repeats_is_part_of_the_run_identity_only_when_above_one() -> None:
    from evalkit._engine.checkpoint import config_fingerprint
    from evalkit._spec.config import EvalkitConfig

    base = {"goldens": "g", "checks": "c", "metrics": ["exact_match"], "target": {"python": "a:b"}}
    one = config_fingerprint(EvalkitConfig.model_validate(base))
    explicit_one = config_fingerprint(EvalkitConfig.model_validate({**base, "repeats": 1}))
    three = config_fingerprint(EvalkitConfig.model_validate({**base, "repeats": 3}))
    assert one == explicit_one
    assert three != one


def test_a_gate_run_reports_progress_per_trial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit._app.pipeline import prepare, run_candidate
    from evalkit._spec.config import load_config

    repeated_project(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    seen: list[str] = []
    prepared = prepare(load_config(tmp_path / "evalkit.yaml"))
    result = run_candidate(prepared, on_row=lambda _i, r: seen.append(r.case_id))
    assert seen == ["a", "b"] * 3  # every trial, as it finishes (pass by pass)
    assert len(result.per_query) == 2
