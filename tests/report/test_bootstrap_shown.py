"""Where another procedure decides, the details show the spec's bootstrap interval and why (#23)."""

from __future__ import annotations

import html
import json
from typing import Final

import numpy as np
from numpy.typing import NDArray

from evalkit._model.results import CaseResult, RunResult
from evalkit._spec.artifact import GoldensInfo, RunArtifact, build_artifact
from evalkit._spec.checks import CheckSpec
from evalkit.gate.model import GateOptions
from evalkit.gate.procedure import evaluate_gate
from evalkit.report.html import render_html
from evalkit.report.json_report import dumps
from evalkit.report.markdown import render_markdown
from evalkit.report.terminal import render_terminal
from evalkit.stats.procedures import BOOTSTRAP_NOT_DECIDING
from evalkit.stats.significance import paired_bootstrap
from evalkit.targets.base import TargetResponse


def artifact(name: str, values: NDArray[np.float64]) -> RunArtifact:
    rows = [
        CaseResult(f"q{i:03d}", TargetResponse([f"q{i:03d}"], latency_ms=1.0), {"ndcg@10": v})
        for i, v in enumerate(values.tolist())
    ]
    ids = {f"q{i:03d}": f"fp{i}" for i in range(len(values))}
    return build_artifact(
        RunResult(name, rows), ["ndcg@10"], goldens=GoldensInfo("set", ids), git=("beef", False)
    )


def test_the_bootstrap_interval_beside_a_t_verdict_is_paired_bootstraps() -> None:
    rng = np.random.default_rng(23)
    base = rng.random(40)
    cand = np.clip(base + rng.normal(-0.03, 0.1, 40), 0.0, 1.0)
    options = GateOptions(n_resamples=999, seed=7)
    checks = [CheckSpec(id="nsr", metric="ndcg@10", vs_baseline="no_significant_regression")]
    report = evaluate_gate(checks, artifact("c", cand), artifact("b", base), options)
    c = report.verdicts[0].comparison
    assert c is not None
    assert c.procedure in ("t", "skew-t")
    spec = paired_bootstrap(
        artifact("c", cand).result, artifact("b", base).result, "ndcg@10", n_resamples=999, seed=7
    )
    assert c.bootstrap_ci == (spec.ci_low, spec.ci_high, 0.95)
    # the deciding interval is another one: what the line beside it is for
    assert (c.ci_low, c.ci_high) != (spec.ci_low, spec.ci_high)
    text = render_markdown(report, config_name="evalkit.yml")
    assert f"percentile bootstrap 95% CI [{spec.ci_low:+.4f}, {spec.ci_high:+.4f}]" in text
    assert BOOTSTRAP_NOT_DECIDING in text
    shown = json.loads(dumps(report))["checks"][0]["comparison"]["bootstrap_ci"]
    assert shown == {"low": spec.ci_low, "high": spec.ci_high, "confidence": 0.95}
    # the HTML page gives the same block, collapsed under the check, with what decided
    page = render_html(report)
    block = page[page.index('<details class="check"><summary><span class="id">nsr') :]
    block = block[: block.index("</details>")]
    assert f"percentile bootstrap 95% CI [{spec.ci_low:+.4f}, {spec.ci_high:+.4f}]" in block
    assert html.escape(BOOTSTRAP_NOT_DECIDING) in block
    assert f"{html.escape(c.decided_by)} over 40 paired cases" in block
    assert c.decided_by == "paired t"


def test_no_second_interval_where_the_bootstrap_decided() -> None:
    rng = np.random.default_rng(24)
    base = rng.random(30)
    cand = np.clip(base + rng.normal(0.0, 0.1, 30), 0.0, 1.0)
    checks = [
        CheckSpec(
            id="nsr", metric="ndcg@10", vs_baseline="no_significant_regression", method="bootstrap"
        )
    ]
    report = evaluate_gate(
        checks, artifact("c", cand), artifact("b", base), GateOptions(n_resamples=499, seed=1)
    )
    c = report.verdicts[0].comparison
    assert c is not None
    assert c.procedure == "bootstrap"
    assert c.bootstrap_ci is None
    assert BOOTSTRAP_NOT_DECIDING not in render_markdown(report, config_name="evalkit.yml")


def test_the_terminal_names_the_procedure_that_decided_each_check() -> None:
    rng = np.random.default_rng(25)
    base = rng.random(40)
    cand = np.clip(base + rng.normal(0.0, 0.1, 40), 0.0, 1.0)
    nsr: Final = "no_significant_regression"
    checks = [
        CheckSpec(id="by_default", metric="ndcg@10", vs_baseline=nsr),
        CheckSpec(id="by_bootstrap", metric="ndcg@10", vs_baseline=nsr, method="bootstrap"),
        CheckSpec(id="by_t", metric="ndcg@10", vs_baseline=nsr, method="t"),
    ]
    options = GateOptions(n_resamples=499, seed=3)
    report = evaluate_gate(checks, artifact("c", cand), artifact("b", base), options)
    chosen = report.verdicts[0].comparison
    assert chosen is not None
    assert chosen.procedure == "t"  # near-symmetric differences: auto chose plain t
    text = render_terminal(report, width=80, capture=True, color=False)
    assert text is not None
    said = " ".join(text[text.index("Decided by") :].split())
    assert said.startswith(
        "Decided by paired t (by_default, by_t); percentile bootstrap (by_bootstrap)."
    ), said
    one = evaluate_gate(checks[2:], artifact("c", cand), artifact("b", base), options)
    shown = render_terminal(one, width=80, capture=True, color=False)
    assert shown is not None
    assert "Decided by paired t (every compared check)." in shown
