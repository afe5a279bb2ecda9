"""The skew warning fires on exactly the samples it describes, and states the default's limit.

The default (``auto`` = paired t) has no branch for skewed differences: on strongly
skewed data it fails falsely above its nominal rate (docs/calibration.md, "Strongly
skewed differences"), so each verdict on such a sample carries the warning, with that
limit.  Each generated sample goes through the real gate.
"""

from __future__ import annotations

import numpy as np
import pytest

from evalkit._spec.checks import CheckSpec
from evalkit.gate.model import GateOptions
from evalkit.gate.procedure import evaluate_gate
from evalkit.stats.diagnostics import SKEW_LIMIT, SKEW_LIMIT_FIGURES, skewness
from evalkit.stats.names import GateMethod
from helpers.slice_runs import METRIC, artefact

OPTIONS = GateOptions(n_resamples=200, seed=1)


def _skew_warning(method: GateMethod | None, diffs: np.ndarray) -> tuple[str, str]:
    """(the skew warning's text or '', the verdict's procedure) for these differences."""
    base = {f"c{i:03d}": 0.5 for i in range(diffs.size)}
    cand = {cid: 0.5 + float(d) for cid, d in zip(base, diffs, strict=True)}
    spec = CheckSpec("skewed", METRIC, vs_baseline="no_significant_regression", method=method)
    (verdict,) = evaluate_gate(
        [spec], artefact("cand", cand), artefact("base", base), OPTIONS
    ).verdicts
    assert verdict.comparison is not None
    skewed = [w for w in verdict.comparison.warnings if "heavily skewed" in w]
    return (skewed[0] if skewed else ""), verdict.comparison.procedure


def _samples() -> list[np.ndarray]:
    rng = np.random.default_rng(23)
    out = [np.array([0.0] * 34 + [0.4, 0.6, 0.2, 1.0])]  # the quick start's shape
    for n in (20, 38, 80):
        out.append(rng.exponential(0.1, n))  # a stable right skew
        out.append(-rng.exponential(0.1, n))  # a stable left skew
        tied = np.zeros(n)
        tied[: max(2, n // 8)] = rng.exponential(0.3, max(2, n // 8))
        out.append(tied)  # most cases tie
        spike = rng.normal(0.0, 0.01, n)
        spike[0] = 1.0
        out.append(spike)  # one extreme case carries the whole skew
    # five big wins on a symmetric core: the skew survives setting three cases aside, not
    # five, so plain t stays beside the corrected interval
    out.append(np.concatenate([np.linspace(-0.1, 0.1, 25), [0.5, 0.6, 0.7, 0.8, 0.9]]) * 0.3)
    return out


@pytest.mark.parametrize("method", [None, "t"])
@pytest.mark.parametrize("index", range(14))
def test_the_warning_fires_exactly_on_skewed_samples_and_states_the_limit(
    index: int, method: GateMethod | None
) -> None:
    diffs = _samples()[index]
    text, procedure = _skew_warning(method, diffs)
    assert procedure == "t"
    assert bool(text) == (abs(skewness(diffs)) > SKEW_LIMIT)
    if text:
        assert SKEW_LIMIT_FIGURES in text


def test_the_quick_start_shape_warns() -> None:
    text, _ = _skew_warning(None, _samples()[0])
    assert SKEW_LIMIT_FIGURES in text


def test_both_outcomes_are_exercised() -> None:
    warned = {bool(_skew_warning(None, d)[0]) for d in _samples()}
    assert warned == {True, False}
