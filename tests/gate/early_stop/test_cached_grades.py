"""Cached judge grades cost nothing, and the checks still read the cases in the seeded order.

A real judge on loopback (priced, so every paid grade reports its cost) grades a baseline
of 400 cases; a candidate then answers a quarter of them differently.  Gated with
``stop_early``, once with an empty judge cache and once with the baseline's cache (the
unchanged answers' grades free), the two gates must run the same cases and stop at the
same point with the same verdict: were the free cases put first in the sample, the
unchanged cases would come first and the stop would move.  ``evalkit`` in process.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit import read_artifact
from evalkit._app.early_stop import _cost, case_units
from evalkit._model import registry
from evalkit._model.results import CaseResult
from evalkit.cli import main
from evalkit.targets import TargetResponse
from fakes.openai_server import FakeOpenAI, grade
from helpers.cli import answer_target
from helpers.judge_project import imports_undone, openai_judge_config

N = 400
# 150 prompt and 25 completion tokens a call (the fake's usage) at these prices: $0.20
PRICES = "  prices: {input: 1000, output: 2000}\n"
PER_CALL = 0.2
CHECKS = (
    "checks:\n  - id: not_worse\n    metric: helpfulness\n"
    "    vs_baseline: no_significant_regression\n"
)
STOP = "stop_early:\n  batch: 50\n  seed: 3\n"


def _changed(case_id: str) -> bool:
    return hashlib.sha256(case_id.encode()).digest()[0] % 4 == 0


def _by_answer(request: dict[str, object]) -> object:
    return grade(5) if "<response>\\nParis" in json.dumps(request) else grade(1)


@pytest.fixture(autouse=True)
def _own_imports(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with imports_undone("base_answers"), imports_undone("cand_answers"):
        yield


def _write(tmp_path: Path, base_url: str) -> None:
    ids = [f"c{i:03d}" for i in range(N)]
    (tmp_path / "base_answers.py").write_text(answer_target(dict.fromkeys(ids, "Paris")))
    cand = {i: "London" if _changed(i) else "Paris" for i in ids}
    (tmp_path / "cand_answers.py").write_text(answer_target(cand))
    goldens = "".join(f'{{"id": "{i}", "query": "capital {i}?", "expected": "x"}}\n' for i in ids)
    (tmp_path / "goldens.jsonl").write_text(goldens)
    (tmp_path / "checks.yaml").write_text(CHECKS)
    for name, module, stop in (("base", "base_answers", ""), ("cand", "cand_answers", STOP)):
        config = openai_judge_config(
            module,
            base_url,
            model="gpt-test-judge",
            metrics="helpfulness",
            goldens="goldens.jsonl",
            extra=PRICES,
        )
        (tmp_path / f"{name}.yaml").write_text(config + "name: answers\n" + stop)


def _main(args: list[str]) -> int:
    with registry.isolated():  # each command registers the judge afresh, as a process would
        return main(args)


def _gate(tmp_path: Path, tag: str) -> dict[str, object]:
    code = _main(
        [
            "gate",
            "-c",
            str(tmp_path / "cand.yaml"),
            "--baseline",
            str(tmp_path / "base.json"),
            "--json",
            str(tmp_path / f"{tag}.json"),
            "--out",
            str(tmp_path / f"{tag}-run.json"),
        ]
    )
    report: dict[str, object] = json.loads((tmp_path / f"{tag}.json").read_text())
    report["exit"] = code
    report["ran"] = sorted(read_artifact(tmp_path / f"{tag}-run.json").result.ids())
    return report


def test_a_warm_cache_makes_cached_cases_free_and_moves_no_stop(tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "judge.json"
    with FakeOpenAI(responder=_by_answer) as api:
        _write(tmp_path, api.openai_base_url)
        base = ["run", "-c", str(tmp_path / "base.yaml"), "--out", str(tmp_path / "base.json")]
        assert _main(base) == 0
        shutil.copy(cache, tmp_path / "warm.json")
        cache.unlink()
        before = len(api.completion_requests)
        cold = _gate(tmp_path, "cold")
        cold_calls = len(api.completion_requests) - before
        shutil.copy(tmp_path / "warm.json", cache)
        before = len(api.completion_requests)
        warm = _gate(tmp_path, "warm")
        warm_calls = len(api.completion_requests) - before

    cold_stop, warm_stop = cold["stopped_early"], warm["stopped_early"]
    assert isinstance(cold_stop, dict)
    assert isinstance(warm_stop, dict)
    assert cold["exit"] == warm["exit"] == 1
    assert cold["verdict"] == warm["verdict"] == "fail"
    assert warm_stop["cases_run"] == cold_stop["cases_run"] < N
    assert warm["ran"] == cold["ran"]
    # the sample is the seeded order's prefix, whatever the cache holds
    order = [u[0] for u in case_units([f"c{i:03d}" for i in range(N)], 3)]
    assert warm["ran"] == sorted(order[: warm_stop["cases_run"]])
    ran = cold["ran"]
    assert isinstance(ran, list)
    changed = [i for i in ran if _changed(i)]
    # cold: every case run paid for; warm: only the changed answers (new outputs)
    assert cold_calls == len(ran)
    assert warm_calls == len(changed) < len(ran)
    assert cold_stop["cost_usd"] == pytest.approx(PER_CALL * len(ran))
    assert warm_stop["cost_usd"] == pytest.approx(PER_CALL * len(changed))


def _row(**meta: object) -> CaseResult:
    return CaseResult("c", TargetResponse(["d"], meta=dict(meta)), {})


def test_a_cached_grade_is_known_to_cost_nothing_and_an_unpriced_one_is_unknown() -> None:
    cached = _row(helpfulness_cached=True)
    paid = _row(helpfulness_cached=False, helpfulness_cost_usd=0.2)
    unpriced = _row(helpfulness_cached=False)  # a judge without prices
    assert _cost([cached, cached]) == 0.0
    assert _cost([cached, paid]) == pytest.approx(0.2)
    assert _cost([cached, unpriced]) is None  # not "$0.00": one grade's price is unknown
    assert _cost([_row(), _row()]) is None
    assert _cost([_row(cost_usd=0.5), unpriced]) == pytest.approx(0.5)  # as the target says
