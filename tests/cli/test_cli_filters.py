"""The CLI as a user meets it: case filters, config typos, report wording (subprocess tests)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from helpers.artefact_docs import load_artefact
from helpers.cli import evalkit, write_files
from helpers.tiny_project import CHECKS
from helpers.tiny_project import CONFIG as BASE_CONFIG

# The target answers each case with the ranking its golden carries (context "ranking");
# "a" cases find their relevant document first, "b" cases miss it: a subset differs.
TARGET_MODULE = """
from evalkit import CallableTarget


def make_target():
    return CallableTarget(lambda case: case.context["ranking"].split(), name="by-context")
"""

RANKINGS = {"a1": "d1 d2", "a2": "d3 d1", "a3": "d2 d9", "b1": "d9 d1", "b2": "d9 d3", "b3": "x y"}
GOLDENS = "".join(
    json.dumps(
        {
            "id": cid,
            "query": f"q {cid}",
            "relevant": [ranking.split()[0 if cid.startswith("a") else 1]],
            "context": {"ranking": ranking},
        }
    )
    + "\n"
    for cid, ranking in RANKINGS.items()
)
CONFIG = BASE_CONFIG.replace("tiny_target:make_target", "ranked_target:make_target")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    files = {"ranked_target.py": TARGET_MODULE, "goldens.jsonl": GOLDENS, "checks.yaml": CHECKS}
    return write_files(tmp_path, {**files, "evalkit.yaml": CONFIG})


# ----------------------------------------------------------------- config keys: did you mean


@pytest.mark.parametrize(
    ("good", "typo", "expected"),
    [
        ("checks: c", "chekcs: c", "unknown key 'chekcs' (did you mean 'checks'?)"),
        ("n_resamples:", "n_resample:", "unknown key 'n_resample' (did you mean 'n_resamples'?)"),
        (
            '  python: "ranked_target:make_target"',
            '  python: "ranked_target:make_target"\n  nmae: x',
            "unknown key 'target.nmae' (did you mean 'name'?)",
        ),
    ],
)
def test_a_mistyped_config_key_is_named_with_its_likely_spelling(
    project: Path, good: str, typo: str, expected: str
) -> None:
    (project / "evalkit.yaml").write_text(CONFIG.replace(good, typo))
    line = one_line_error(evalkit("run", "--out", "a.json", cwd=project), 2, expected)
    # the missing key the typo explains is the same mistake: not reported, not counted
    assert "missing required key" not in line
    assert "more)" not in line
    assert line.startswith("evalkit: evalkit.yaml:"), line  # with the line it is on


def test_an_unknown_config_key_like_no_other_says_remove_it(project: Path) -> None:
    (project / "evalkit.yaml").write_text(CONFIG + "owner: me\n")
    line = one_line_error(evalkit("run", cwd=project), 2, "unknown key 'owner'", "remove it")
    assert "did you mean" not in line


def one_line_error(result: subprocess.CompletedProcess[str], code: int, *needles: str) -> str:
    """The one stderr line of a refused command (checked: its exit code, its words)."""
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("evalkit: ")
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


# ----------------------------------------------------------------- what the terminal report says

SCOPED_CHECKS = """\
checks:
  - id: controls_hold
    metric: recall@1
    op: ">="
    threshold: 0.9
    scope: [a1, b1, b2]
"""


def test_a_failing_scoped_threshold_names_the_cases_that_missed(project: Path) -> None:
    (project / "checks.yaml").write_text(SCOPED_CHECKS)
    gate = evalkit("gate", cwd=project)
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert "2 of the 3 scoped case(s) miss it on their own: b1, b2" in gate.stdout, gate.stdout


def test_a_passing_scoped_threshold_names_no_case(project: Path) -> None:
    (project / "checks.yaml").write_text(SCOPED_CHECKS.replace("0.9", "0.3"))
    gate = evalkit("gate", cwd=project)
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert "on their own" not in gate.stdout


SHIFTABLE_TARGET = """
from evalkit import CallableTarget


def make_target(shift: bool = False):
    def rank(case):
        ids = case.context["ranking"].split()
        return ids[::-1] if shift else ids
    return CallableTarget(rank, name="shifted" if shift else "plain")
"""


@pytest.mark.parametrize("n_losses", [6, 11, 37])
def test_the_count_of_losses_not_shown_is_every_loss_not_shown(
    tmp_path: Path, n_losses: int
) -> None:
    """The gate keeps the 10 worst cases; "N more not shown" still counts all the losses."""
    n_cases = n_losses + 4  # the others tie: their relevant document is in both positions
    goldens = "".join(
        json.dumps(
            {
                "id": f"c{i:02d}",
                "query": f"q{i}",
                "relevant": ["d1"] if i < n_losses else ["d1", "d2"],
                "context": {"ranking": "d1 d2"},
            }
        )
        + "\n"
        for i in range(n_cases)
    )
    config = CONFIG.replace("ranked_target", "shiftable_target").replace(
        "goldens:", "name: shifting\ngoldens:"
    )
    files = {
        "shiftable_target.py": SHIFTABLE_TARGET,
        "goldens.jsonl": goldens,
        "checks.yaml": CHECKS,
        "evalkit.yaml": config,
        "shifted.yaml": config.replace('make_target"', 'make_target"\n  args: {shift: true}'),
    }
    project = write_files(tmp_path, files)
    assert evalkit("run", "--out", "base.json", cwd=project).returncode == 0
    gate = evalkit("gate", "-c", "shifted.yaml", "--baseline", "base.json", cwd=project)
    assert gate.returncode == 1, gate.stderr
    assert f"0/{n_losses}/4" in gate.stdout, gate.stdout  # W/L/T: every loss counted
    assert "Most regressed for no_regression:" in gate.stdout
    hidden = n_losses - 5
    unit = "loss" if hidden == 1 else "losses"
    assert f"… {hidden:,} more {unit} not shown" in gate.stdout, gate.stdout


@pytest.mark.parametrize("columns", [50, 72, 100])
def test_a_clear_cut_rerun_keeps_its_caveat_in_the_details(project: Path, columns: int) -> None:
    """An identical rerun (p = 1): its small-n caveat cannot change the reading, so it is
    not in view but whole in the details; every line fits the width, none ends in a space."""
    assert evalkit("run", "--out", "base.json", cwd=project).returncode == 0
    gate = evalkit(
        "gate", "--baseline", "base.json", "--markdown", "comment.md",
        cwd=project, env={"COLUMNS": str(columns)},
    )  # fmt: skip
    assert gate.returncode == 0, gate.stderr
    lines = gate.stdout.splitlines()
    assert all(len(line) <= columns and line == line.rstrip() for line in lines), lines
    assert "⚠" not in gate.stdout
    details = (project / "comment.md").read_text().split("#### Per-check details", 1)[1]
    assert "- warning: only 6 cases: below 30 cases the false-fail rate" in details


LATENCY_CHECKS = """\
checks:
  - id: p95_ceiling
    metric: latency_p95
    op: "<="
    threshold: 0
  - id: mean_latency
    metric: latency_mean
    vs_baseline: no_significant_regression
"""


def test_latency_is_printed_with_its_unit(project: Path) -> None:
    (project / "checks.yaml").write_text(LATENCY_CHECKS)
    config = project / "evalkit.yaml"
    config.write_text(CONFIG.replace("[recall@1, ndcg@10]", "[latency_p95, latency_mean]"))
    assert evalkit("run", "--out", "base.json", cwd=project).returncode == 0
    gate = evalkit("gate", "--baseline", "base.json", "--markdown", "r.md", cwd=project)
    assert gate.returncode == 1, gate.stdout + gate.stderr  # no latency is <= 0 ms
    number = r"[-+]?\d[\d.e+-]*"
    out = gate.stdout
    assert re.search(rf"{number} ms, needs ≤ 0\.0000 ms", out), out  # the table
    assert re.search(rf"latency_p95 = {number} ms misses <= 0 ms", out), out  # why it failed
    # before → after, Δ and its interval in the table; in the markdown report Δ and its
    # interval in the row (spaces that do not break), before and after in the details
    compared = rf"{number} ms → {number} ms: Δ {number} ms \[{number}, {number}\] ms"
    assert re.search(compared, out), out
    md = (project / "r.md").read_text()
    assert re.search(rf"Δ {number} ms \[{number}, {number}\] ms", md.replace("&nbsp;", " "))
    assert re.search(rf"paired means: baseline {number} ms, candidate {number} ms, Δ", md)


# ----------------------------------------------------------------- -k / --case: a few cases


def test_run_with_k_runs_only_the_matching_cases_and_says_so(project: Path) -> None:
    run = evalkit("run", "-k", "B", cwd=project)  # ignoring case, like pytest -k
    assert run.returncode == 0, run.stderr
    written = project / ".evalkit" / "runs" / "evalkit.subset.json"
    assert f"wrote {written.relative_to(project)} (3 cases of 6, subset: -k B)" in run.stdout
    doc = load_artefact(written)
    assert [row["id"] for row in doc["rows"]] == ["b1", "b2", "b3"]
    assert doc["subset"] == "-k B"
    # the whole run's artefact is not replaced by a subset
    assert not (project / ".evalkit" / "runs" / "evalkit.json").exists()
    shown = evalkit("show", written, cwd=project)
    assert "subset:    -k B (only these cases: never a baseline)" in shown.stdout, shown.stdout


def test_a_subset_run_is_never_a_baseline(project: Path) -> None:
    (project / "evalkit.yaml").write_text(CONFIG + "baseline: {path: baseline.json}\n")
    assert evalkit("run", "--case", "a1", "--out", "one.json", cwd=project).returncode == 0
    one_line_error(
        evalkit("promote", "one.json", cwd=project), 2, "--case a1", "a baseline must hold every"
    )
    assert not (project / "baseline.json").exists()


def gate_json(project: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict]:  # type: ignore[type-arg]
    gate = evalkit("gate", *args, "--json", "r.json", "--markdown", "r.md", cwd=project)
    report = json.loads((project / "r.json").read_text()) if (project / "r.json").exists() else {}
    return gate, report


def test_a_gate_on_a_subset_that_passes_is_incomplete_not_a_pass(project: Path) -> None:
    assert evalkit("run", "--out", "base.json", cwd=project).returncode == 0
    gate, report = gate_json(project, "-k", "a", "--baseline", "base.json")
    assert gate.returncode == 4, gate.stdout + gate.stderr  # ExitCode.INCOMPLETE
    assert gate.stdout.startswith("INCOMPLETE: 2 of 2 checks passed on 3 of 6 cases only")
    assert "Coverage: 3 of 6 cases (subset: -k a): not a verdict on the whole golden set" in (
        gate.stdout
    )
    assert report["verdict"] == "incomplete"
    assert report["exit_code"] == 4
    assert report["subset"] == {"selection": "-k a", "cases": ["a1", "a2", "a3"], "n_total": 6}
    assert "Coverage: 3 of 6 cases (subset: -k a)" in (project / "r.md").read_text()
    # the same cases through an existing run of every case: the same answer
    again = evalkit("gate", "--candidate", "base.json", "--case", "a1", "--case", "a2", cwd=project)
    assert again.returncode == 4, again.stdout + again.stderr
    assert "2 of 6 cases (subset: --case a1 --case a2)" in again.stdout


def test_a_blocking_failure_on_a_subset_fails_the_gate(project: Path) -> None:
    gate, report = gate_json(project, "-k", "b", "--case", "a1")
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert gate.stdout.startswith("FAIL: 0 of 2 checks passed on 4 of 6 cases only")
    assert report["verdict"] == "fail"
    assert report["subset"]["cases"] == ["a1", "b1", "b2", "b3"]


def test_a_subset_artefact_cannot_pass_a_gate_of_the_whole_set(project: Path) -> None:
    assert evalkit("run", "-k", "a", "--out", "some.json", cwd=project).returncode == 0
    result = evalkit("gate", "--candidate", "some.json", cwd=project)
    one_line_error(result, 2, "no row for 3 of the 6 golden case(s)")


def test_a_scoped_check_outside_the_subset_is_not_decided_and_says_so(project: Path) -> None:
    (project / "checks.yaml").write_text(SCOPED_CHECKS + CHECKS.removeprefix("checks:\n"))
    gate = evalkit("gate", "-k", "a2", cwd=project)
    assert gate.returncode == 4, gate.stdout + gate.stderr
    assert "check 'controls_hold' not decided: none of its 3 scoped case(s) is in the" in (
        " ".join(gate.stdout.split())
    )
    # a scope the subset cuts is decided on the cases of both
    narrowed = evalkit("gate", "-k", "1", cwd=project)  # a1, b1: controls_hold over a1, b1
    assert narrowed.returncode == 1, narrowed.stdout
    assert "controls_hold" in narrowed.stdout
    assert "1 of the 2 scoped case(s) miss it on their own: b1" in narrowed.stdout


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (("--case", "a10"), ("--case a10", "has no case 'a10'", "(did you mean 'a1'?)")),
        (("-k", "zz"), ("-k zz matches none of the 6 case(s)",)),
        (("-k", " "), ("-k needs a non-empty part of a case id",)),
    ],
)
@pytest.mark.parametrize("command", ["run", "gate"])
def test_a_filter_that_keeps_nothing_is_refused_before_anything_runs(
    project: Path, command: str, args: tuple[str, ...], needles: tuple[str, ...]
) -> None:
    one_line_error(evalkit(command, *args, cwd=project), 2, *needles)
    assert not (project / ".evalkit" / "runs").exists()


def test_a_shard_of_a_subset_is_refused(project: Path) -> None:
    result = evalkit("run", "--shard", "1/2", "-k", "a", cwd=project)
    one_line_error(result, 2, "--shard 1/2 and -k a both pick cases")


# ----------------------------------------------------------------- checkpoint and lock files

BOOM_METRIC = """
import os

from evalkit import register_metric


@register_metric("boom", higher_is_better=True)
def boom(response, case):
    if case.id == os.environ.get("BOOM_ON", ""):
        raise ValueError("cannot score this one")
    return 1.0
"""


def test_checkpoint_and_lock_live_under_dot_evalkit_and_no_lock_outlives_a_metric_error(
    project: Path,
) -> None:
    (project / "boom_metric.py").write_text(BOOM_METRIC)
    (project / "evalkit.yaml").write_text(
        CONFIG.replace("[recall@1, ndcg@10]", "[recall@1, ndcg@10, boom]")
        + "plugins: [boom_metric]\n"
    )
    (project / "out").mkdir()
    stopped = evalkit("run", "--out", "out/run.json", cwd=project, env={"BOOM_ON": "b1"})
    assert stopped.returncode in (2, 3), stopped.stderr
    assert "metric 'boom' raised ValueError on case 'b1'" in stopped.stderr
    assert list((project / "out").iterdir()) == []  # nothing beside the output
    left = sorted(p.name for p in (project / ".evalkit" / "checkpoints").iterdir())
    assert len(left) == 1, left  # the checkpoint of a1..a3, and no stale lock
    assert left[0].startswith("run.json-")
    assert left[0].endswith(".checkpoint.jsonl")
    # resume finds it: only the cases not yet done run, and a finished run leaves nothing
    resumed = evalkit("run", "--out", "out/run.json", "--resume", cwd=project)
    assert resumed.returncode == 0, resumed.stderr
    assert "3 of 6 case(s) already done" in resumed.stderr
    assert list((project / ".evalkit" / "checkpoints").iterdir()) == []
    assert [p.name for p in (project / "out").iterdir()] == ["run.json"]


def test_a_refused_run_leaves_no_lock(project: Path) -> None:
    (project / "boom_metric.py").write_text(BOOM_METRIC)
    (project / "evalkit.yaml").write_text(
        CONFIG.replace("[recall@1, ndcg@10]", "[recall@1, ndcg@10, boom]")
        + "plugins: [boom_metric]\n"
    )
    assert evalkit("run", cwd=project, env={"BOOM_ON": "a3"}).returncode != 0
    # a plain run refuses to discard the finished cases: still no lock left behind
    again = evalkit("run", cwd=project)
    assert again.returncode == 2, again.stderr
    assert "rerun with --resume" in again.stderr
    names = [p.name for p in (project / ".evalkit" / "checkpoints").iterdir()]
    assert len(names) == 1, names
    assert not any(name.endswith(".lock") for name in names)


# ----------------------------------------------------------------- the Action's exit codes


def test_the_action_outside_github_exits_2_and_says_so_in_its_outputs(project: Path) -> None:
    """`evalkit action` itself: the bad-environment path reports ExitCode.INPUT everywhere."""
    outputs = project / "outputs.txt"
    env = {"INPUT_CONFIG": "evalkit.yaml", "GITHUB_OUTPUT": str(outputs), "GITHUB_REPOSITORY": ""}
    result = evalkit("action", cwd=project, env=env)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "must run inside GitHub Actions" in result.stdout + result.stderr
    lines = outputs.read_text().splitlines()
    assert lines[lines.index("exit-code<<" + lines[0].split("<<")[1]) + 1] == "2"


def promote_twice(project: Path, metric: str, checks: str) -> None:
    """Two promotions of a run computing ``metric`` into the local file store."""
    (project / "checks.yaml").write_text(checks)
    (project / "evalkit.yaml").write_text(
        CONFIG.replace("[recall@1, ndcg@10]", f"[recall@1, {metric}]")
        + "baseline: {path: baseline.json}\n"
    )
    for _ in range(2):
        assert evalkit("run", cwd=project).returncode == 0
        assert evalkit("promote", cwd=project).returncode == 0


def test_the_latency_trend_of_evalkit_history_says_its_unit(project: Path) -> None:
    promote_twice(project, "latency_p95", LATENCY_CHECKS.split("  - id: mean_latency")[0])
    history = evalkit("history", cwd=project)
    assert history.returncode == 0, history.stderr
    assert "latency_p95 (lower is better; values in ms)" in history.stdout, history.stdout


def test_the_html_trend_of_a_latency_drift_check_says_its_unit(project: Path) -> None:
    drift = (
        "checks:\n  - {id: drift, metric: latency_mean, vs_reference: no_significant_regression}\n"
    )
    promote_twice(project, "latency_mean", drift)
    assert evalkit("pin", "1 promotions ago", cwd=project).returncode == 0
    gate = evalkit("gate", "--html", "r.html", cwd=project)
    assert gate.returncode in (0, 1), gate.stdout + gate.stderr
    page = (project / "r.html").read_text()
    trend = page.split('<svg class="trend"', 1)[1].split("</svg>", 1)[0]
    assert "latency_mean (lower is better; values in ms)" in trend
    assert re.search(r'class="tick">[-+]?\d[\d.e+-]* ms</text>', trend), trend


def test_a_subset_run_resumes_only_with_its_own_selection(project: Path) -> None:
    (project / "boom_metric.py").write_text(BOOM_METRIC)
    (project / "evalkit.yaml").write_text(
        CONFIG.replace("[recall@1, ndcg@10]", "[recall@1, ndcg@10, boom]")
        + "plugins: [boom_metric]\n"
    )
    stopped = evalkit("run", "-k", "a", "-k", "b1", cwd=project, env={"BOOM_ON": "b1"})
    assert stopped.returncode != 0  # a1..a3 are checkpointed, b1 stopped the run
    other = evalkit("run", "-k", "a", "--resume", cwd=project)
    one_line_error(other, 2, "cannot resume", "cases -k a -k b1", "cases -k a")
    same = evalkit("run", "-k", "a", "-k", "b1", "--resume", cwd=project)
    assert same.returncode == 0, same.stderr
    assert "3 of 4 case(s) already done" in same.stderr
    assert "(4 cases of 6, subset: -k a -k b1)" in same.stdout


def test_compare_and_show_print_latency_with_its_unit(project: Path) -> None:
    (project / "checks.yaml").write_text(LATENCY_CHECKS)
    config = project / "evalkit.yaml"
    config.write_text(
        CONFIG.replace("[recall@1, ndcg@10]", "[recall@1, latency_p95, latency_mean]")
    )
    for out in ("a.json", "b.json"):
        assert evalkit("run", "--out", out, cwd=project).returncode == 0
    for fmt in ("text", "markdown"):
        compared = evalkit("compare", "a.json", "b.json", "--format", fmt, cwd=project)
        assert compared.returncode == 0, compared.stderr
        rows = [line for line in compared.stdout.splitlines() if "latency" in line]
        assert len(rows) == 2, compared.stdout  # latency_p95 and latency_mean (markdown: &#95;)
        assert all(re.search(r"latency(_|&#95;)(p95|mean) \(ms\)", row) for row in rows), rows
        assert not any(
            "recall@" in line and "(ms)" in line for line in compared.stdout.splitlines()
        )
    html = evalkit("compare", "a.json", "b.json", "--html", "c.html", cwd=project)
    assert html.returncode == 0, html.stderr
    page = (project / "c.html").read_text()
    assert re.search(r'<td class="num">[-+]?\d[\d.e+-]* ms</td>', page), page
    shown = evalkit("show", "a.json", cwd=project)
    assert shown.returncode == 0, shown.stderr
    (line,) = [ln for ln in shown.stdout.splitlines() if ln.startswith("latency_p95")]
    assert line.endswith(" ms"), line
