"""A verdict's sentence shows the same digits as its table row (one owner: _util.figures).

The gate's messages used four significant digits: ``-0.185`` beside the table's
``-0.1850``, and ``1.235e+04 ms`` for a 12.3 s latency.
"""

from __future__ import annotations

import numpy as np
import pytest

from evalkit._spec.checks import CheckSpec
from evalkit._util.figures import num, signed
from evalkit.gate.model import GateOptions
from evalkit.gate.procedure import evaluate_gate
from evalkit.report.markdown import render_markdown
from helpers.slice_runs import METRIC, artefact

OPTIONS = GateOptions(n_resamples=200, seed=1)


@pytest.mark.parametrize("scale", [1e-3, 0.1, 1.0, 250.0, 12_345.0])
@pytest.mark.parametrize("mode", ["no_significant_regression", "non_inferiority"])
def test_the_message_and_the_table_print_the_same_change_and_interval(
    scale: float, mode: str
) -> None:
    rng = np.random.default_rng(7)
    level = rng.uniform(0.0, 1.0, 40) * scale
    base = {f"c{i:02d}": float(v) for i, v in enumerate(level)}
    cand = {
        cid: v - 0.185 * scale + 0.05 * scale * rng.standard_normal() for cid, v in base.items()
    }
    spec = CheckSpec(
        "change",
        METRIC,
        vs_baseline=mode,  # type: ignore[arg-type]
        margin=0.01 * scale if mode == "non_inferiority" else None,
    )
    report = evaluate_gate([spec], artefact("cand", cand), artefact("base", base), OPTIONS)
    (verdict,) = report.verdicts
    c = verdict.comparison
    assert c is not None
    shown = [signed(c.delta), signed(c.ci_low), signed(c.ci_high)]
    for figure in shown:
        assert figure in verdict.message, (figure, verdict.message)
    assert "e+" not in verdict.message
    assert "e-" not in verdict.message or scale < 1e-2  # below 10^-4 only
    table = render_markdown(report, config_name="cfg")
    for figure in shown:
        assert figure in table, (figure, table)


def test_a_threshold_message_shows_the_value_in_table_digits_and_the_threshold_as_written() -> None:
    values = {f"c{i}": 0.55 for i in range(10)}
    spec = CheckSpec("floor", METRIC, op=">=", threshold=0.6125)
    (verdict,) = evaluate_gate([spec], artefact("cand", values), None, OPTIONS).verdicts
    assert verdict.message.startswith(f"{METRIC} = {num(0.55)} misses >= 0.6125")
