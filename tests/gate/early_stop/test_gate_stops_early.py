"""``stop_early:``: a 2,000-case gate stops once every blocking check is settled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit import read_artifact
from helpers.cli import evalkit, write_files
from helpers.tiny_project import one_line_error

N_CASES = 2000

TARGET = """
import hashlib
import random

from evalkit import CallableTarget, register_metric


def _base(case_id):
    return int(hashlib.sha256(case_id.encode()).hexdigest()[:8], 16) / 16**8


# a grade in [0, 1], declared: the gate reads the nonasymptotic (bounded) sequence
@register_metric("quality", higher_is_better=True, bounds=(0, 1))
def quality(response, case):
    return min(max(float(response.ranked_ids[0]), 0.0), 1.0)


def make(mode="same"):
    def answer(case):
        q = _base(case.id)
        rng = random.Random(case.id + mode)
        if mode == "regressed":
            q -= 0.10 + rng.gauss(0.0, 0.1)
        elif mode == "noisy":
            q += rng.gauss(0.0, 0.1)
        return [repr(q)]

    return CallableTarget(answer, name=mode)
"""

CHECKS = """\
checks:
  - id: no_regression
    metric: quality
    vs_baseline: no_significant_regression
{extra}"""

CONFIG = """\
name: quality
goldens: goldens.jsonl
checks: checks.yaml
metrics: [quality]
plugins: [quality_target]
target:
  python: "quality_target:make"
  args: {{mode: {mode}}}
n_resamples: 200
{stop}"""


def _project(tmp_path: Path, *, extra: str = "", stop: str = "", docs: int = 0) -> Path:
    """``docs``: that many cases per document (the golden field ``doc``), else none."""
    goldens = "".join(
        f'{{"id": "c{i:04d}", "query": "q{i}"'
        + (f', "doc": "d{i // docs}"' if docs else "")
        + "}\n"
        for i in range(N_CASES)
    )
    files = {
        "quality_target.py": TARGET,
        "goldens.jsonl": goldens,
        "checks.yaml": CHECKS.format(extra=extra),
        "base.yaml": CONFIG.format(mode="same", stop=""),
    }
    for mode in ("regressed", "noisy"):
        files[f"{mode}.yaml"] = CONFIG.format(mode=mode, stop=stop)
    project = write_files(tmp_path, files)
    ran = evalkit("run", "-c", "base.yaml", "--out", "base.json", cwd=project)
    assert ran.returncode == 0, ran.stderr
    return project


STOP = "stop_early:\n  batch: 100\n  seed: 7\n"


def test_a_clear_regression_fails_having_run_at_most_half_the_cases(tmp_path: Path) -> None:
    project = _project(tmp_path, stop=STOP)
    gate = evalkit(
        "gate", "-c", "regressed.yaml", "--baseline", "base.json", "--json", "r.json", cwd=project
    )
    assert gate.returncode == 1, gate.stdout + gate.stderr
    report = json.loads((project / "r.json").read_text())
    stopped = report["stopped_early"]
    assert stopped["cases_run"] <= N_CASES // 2
    assert stopped["cases_total"] == N_CASES
    assert stopped["reason"] == "every check settled (anytime-valid)"
    assert f"Stopped after {stopped['cases_run']:,} of 2,000 cases" in gate.stdout
    assert f"{stopped['cases_run']:,}/2,000 cases (stopped early)" in gate.stdout
    assert report["verdict"] == "fail"
    # the runs as they are: the candidate ran the sample, the baseline holds every case
    assert report["candidate"]["n_cases"] == stopped["cases_run"]
    assert report["baseline"]["n_cases"] == N_CASES


def test_an_unchanged_candidate_with_min_effect_passes_having_run_at_most_half(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path, extra="    min_effect: 0.02\n", stop=STOP)
    gate = evalkit(
        "gate", "-c", "noisy.yaml", "--baseline", "base.json", "--json", "r.json", cwd=project
    )
    assert gate.returncode == 0, gate.stdout + gate.stderr
    report = json.loads((project / "r.json").read_text())
    assert report["verdict"] == "pass"
    assert report["stopped_early"]["cases_run"] <= N_CASES // 2
    assert "Stopped after" in gate.stdout


def test_without_a_tolerance_an_unchanged_candidate_runs_every_case(tmp_path: Path) -> None:
    project = _project(tmp_path, stop=STOP)
    gate = evalkit(
        "gate", "-c", "noisy.yaml", "--baseline", "base.json", "--json", "r.json", cwd=project
    )
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert json.loads((project / "r.json").read_text())["stopped_early"] is None


def test_a_budget_spent_first_is_incomplete_and_names_the_undecided(tmp_path: Path) -> None:
    project = _project(tmp_path, stop=STOP + "  max_cases: 200\n")
    gate = evalkit(
        "gate", "-c", "noisy.yaml", "--baseline", "base.json", "--json", "r.json", cwd=project
    )
    assert gate.returncode == 4, gate.stdout + gate.stderr
    report = json.loads((project / "r.json").read_text())
    assert report["verdict"] == "incomplete"
    assert report["stopped_early"]["cases_run"] == 200
    assert "max_cases" in report["stopped_early"]["reason"]
    assert "undecided: no_regression" in gate.stdout


def test_no_stop_early_runs_every_case_and_the_flag_turns_it_on(tmp_path: Path) -> None:
    project = _project(tmp_path)
    off = evalkit(
        "gate", "-c", "regressed.yaml", "--baseline", "base.json", "--json", "r.json", cwd=project
    )
    assert json.loads((project / "r.json").read_text())["stopped_early"] is None
    assert off.returncode == 1
    on = evalkit(
        "gate",
        "-c",
        "regressed.yaml",
        "--baseline",
        "base.json",
        "--stop-early",
        "--json",
        "s.json",
        cwd=project,
    )
    assert on.returncode == 1
    assert json.loads((project / "s.json").read_text())["stopped_early"]["cases_run"] < N_CASES


@pytest.mark.parametrize(
    ("stop", "args", "needle"),
    [
        ("stop_early:\n  batch: 0\n", (), "stop_early.batch"),
        ("stop_early:\n  max_cost_usd: 0\n", (), "stop_early.max_cost_usd"),
        ("stop_early:\n  max_seconds: -1\n", (), "stop_early.max_seconds"),
        ("stop_early:\n  batch: 10\n", ("--case", "c0001"), "stop_early"),
    ],
)
def test_bad_stop_early_input_is_one_line_naming_the_key(
    tmp_path: Path, stop: str, args: tuple[str, ...], needle: str
) -> None:
    goldens = "".join(f'{{"id": "c{i:04d}", "query": "q{i}"}}\n' for i in range(20))
    project = write_files(
        tmp_path,
        {
            "quality_target.py": TARGET,
            "goldens.jsonl": goldens,
            "checks.yaml": CHECKS.format(extra=""),
            "evalkit.yaml": CONFIG.format(mode="same", stop=stop),
        },
    )
    result = evalkit("gate", *args, cwd=project)
    one_line_error(result, 2, needle)


def test_with_declared_clusters_whole_clusters_run_and_a_regression_stops(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path, stop=STOP + "clusters: doc\n", docs=8)
    gate = evalkit(
        "gate",
        "-c",
        "regressed.yaml",
        "--baseline",
        "base.json",
        "--json",
        "r.json",
        "--out",
        "run.json",
        cwd=project,
    )
    assert gate.returncode == 1, gate.stdout + gate.stderr
    stopped = json.loads((project / "r.json").read_text())["stopped_early"]
    assert stopped["settled"]
    assert stopped["cases_run"] <= N_CASES // 2
    ran = read_artifact(project / "run.json").result.ids()
    docs = {int(case_id[1:]) // 8 for case_id in ran}
    assert len(ran) == 8 * len(docs)  # every document's cases, or none of them
    assert "inferred by cluster" in gate.stdout


COSTLY_TARGET = TARGET.replace(
    "from evalkit import CallableTarget, register_metric",
    "from evalkit import CallableTarget, TargetResponse, register_metric",
).replace(
    "        return [repr(q)]",
    "        return TargetResponse([repr(q)], meta={'cost_usd': 0.01})",
)


def test_a_cost_budget_stops_the_run_and_the_report_states_the_cost(tmp_path: Path) -> None:
    project = _project(tmp_path, stop=STOP + "  max_cost_usd: 2.5\n")
    (project / "quality_target.py").write_text(COSTLY_TARGET, encoding="utf-8")
    gate = evalkit(
        "gate", "-c", "noisy.yaml", "--baseline", "base.json", "--json", "r.json", cwd=project
    )
    assert gate.returncode == 4, gate.stdout + gate.stderr
    stopped = json.loads((project / "r.json").read_text())["stopped_early"]
    # 0.01 a case: the budget is spent at the first look at or past 250 cases
    assert stopped["cases_run"] == 300
    assert stopped["cost_usd"] == pytest.approx(3.0)
    assert stopped["cost_usd_estimated_full"] == pytest.approx(20.0)
    assert "max_cost_usd" in stopped["reason"]
    assert "judge cost $3.00 of an estimated $20.00" in gate.stdout


def test_the_order_is_seeded_and_a_rerun_takes_the_same_cases(tmp_path: Path) -> None:
    project = _project(tmp_path, stop=STOP + "  max_cases: 150\n")
    ids = []
    for out in ("a.json", "b.json"):
        evalkit("gate", "-c", "noisy.yaml", "--baseline", "base.json", "--out", out, cwd=project)
        ids.append(sorted(read_artifact(project / out).result.ids()))
    assert ids[0] == ids[1]
    assert len(ids[0]) == 150
    assert ids[0] != [f"c{i:04d}" for i in range(150)]  # a random order, not the file's


def test_a_stopped_run_cannot_be_promoted_as_a_baseline(tmp_path: Path) -> None:
    project = _project(tmp_path, stop=STOP + "  max_cases: 100\n")
    with (project / "noisy.yaml").open("a", encoding="utf-8") as fh:
        fh.write("baseline:\n  path: promoted.json\n")
    evalkit("gate", "-c", "noisy.yaml", "--baseline", "base.json", "--out", "p.json", cwd=project)
    promoted = evalkit("promote", "-c", "noisy.yaml", "p.json", cwd=project)
    assert promoted.returncode == 2
    assert "stop_early" in promoted.stderr


def test_max_cases_with_only_warn_checks_is_incomplete_not_a_broken_gate(tmp_path: Path) -> None:
    project = _project(tmp_path, extra="    level: warn\n", stop=STOP + "  max_cases: 300\n")
    gate = evalkit(
        "gate", "-c", "noisy.yaml", "--baseline", "base.json", "--json", "r.json", cwd=project
    )
    assert gate.returncode == 4, gate.stdout + gate.stderr
    stopped = json.loads((project / "r.json").read_text())["stopped_early"]
    assert stopped["cases_run"] == 300
    assert not stopped["settled"]


def test_repeats_run_every_trial_of_each_batch_and_still_stop(tmp_path: Path) -> None:
    project = _project(tmp_path, stop=STOP + "repeats: 2\n")
    gate = evalkit(
        "gate", "-c", "regressed.yaml", "--baseline", "base.json", "--json", "r.json", cwd=project
    )
    assert gate.returncode == 1, gate.stdout + gate.stderr
    stopped = json.loads((project / "r.json").read_text())["stopped_early"]
    assert stopped["settled"]
    assert stopped["cases_run"] <= N_CASES // 2
