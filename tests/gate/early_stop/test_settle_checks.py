"""Which checks a partial run has settled (evalkit.gate.sequential)."""

from __future__ import annotations

import pytest
from test_gate import artifact, noisy, thr, vs

from evalkit.errors import InputError
from evalkit.gate.sequential import refuse_unsupported, settle_checks


def _states(checks, shift: float, n: int = 600):  # type: ignore[no-untyped-def]
    base, cand = noisy(n, shift, 0.05, seed=9)
    order = sorted(cand)
    ends = list(range(100, n + 1, 100))
    return settle_checks(
        checks, artifact("c", cand), artifact("b", base), order, planned=n, batch_ends=ends
    )


def test_a_clear_regression_settles_as_failed_and_an_unchanged_one_does_not() -> None:
    (failed,) = _states([vs()], -0.1)
    assert failed.outcome == "fail"
    (open_check,) = _states([vs()], 0.0)
    assert open_check.outcome is None  # without min_effect it can only settle by failing
    (passed,) = _states([vs(min_effect=0.03)], 0.0)
    assert passed.outcome == "pass"


def test_a_threshold_settles_on_its_own_mean() -> None:
    (above,) = _states([thr("ndcg@10", ">=", 0.3)], 0.0)
    assert above.outcome == "pass"
    (below,) = _states([thr("ndcg@10", ">=", 0.7)], 0.0)
    assert below.outcome == "fail"


def test_warn_checks_are_not_waited_for_and_aggregates_cannot_settle() -> None:
    states = _states([vs(level="warn"), thr("latency_p95", "<=", 100.0, id="lat")], 0.0)
    assert [s.check_id for s in states] == ["lat"]
    assert states[0].outcome is None
    assert "aggregate" in (states[0].cannot_settle or "")


def test_no_baseline_cannot_settle_a_comparison() -> None:
    _base, cand = noisy(200, -0.1, 0.05, seed=9)
    (state,) = settle_checks(
        [vs()], artifact("c", cand), None, sorted(cand), planned=200, batch_ends=[100, 200]
    )
    assert state.outcome is None
    assert "no baseline" in (state.cannot_settle or "")


def test_what_early_stopping_cannot_read_is_refused_before_anything_runs() -> None:
    with pytest.raises(InputError, match="correction holm"):
        refuse_unsupported([vs()], "holm")
    with pytest.raises(InputError, match="method bootstrap"):
        refuse_unsupported([vs(method="bootstrap")], "none")
    refuse_unsupported([vs(method="bootstrap", level="warn")], "none")


def test_a_metric_with_a_declared_range_reads_the_bounded_sequence() -> None:
    from evalkit.gate.sequential import declared_range

    assert declared_range("ndcg@10") == (0.0, 1.0)
    assert declared_range("latency_p95") is None  # open above
    assert declared_range("no_such_metric") is None
