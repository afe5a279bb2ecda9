"""The CLI as a user meets it: case filters, config typos, report wording (subprocess tests)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from cli_process import evalkit, write_files
from test_cli import CHECKS
from test_cli import CONFIG as BASE_CONFIG

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
    assert f"0 / {n_losses} / 4" in gate.stdout, gate.stdout  # W/L/T: every loss counted
    assert "Most regressed for no_regression:" in gate.stdout
    hidden = n_losses - 5
    unit = "loss" if hidden == 1 else "losses"
    assert f"… {hidden:,} more {unit} not shown" in gate.stdout, gate.stdout


@pytest.mark.parametrize("columns", [50, 72, 100])
def test_warnings_are_wrapped_at_word_boundaries(project: Path, columns: int) -> None:
    assert evalkit("run", "--out", "base.json", cwd=project).returncode == 0
    gate = evalkit("gate", "--baseline", "base.json", cwd=project, env={"COLUMNS": str(columns)})
    assert gate.returncode == 0, gate.stderr
    lines = gate.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("⚠ read with care"))
    warning = []
    for line in lines[start:]:
        assert len(line) <= columns, line
        warning.append(line)
        if line.rstrip().endswith("undecided"):
            break
    assert len(warning) > 1  # long enough to need wrapping at every width tested
    # every break fell between words: re-joined with spaces, the sentence is whole again
    text = " ".join(part.strip() for part in warning)
    assert "only 6 cases: below 30 cases the false-fail rate is not guaranteed" in text, text
    assert "treat a borderline result as undecided" in text, text


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
    assert re.search(rf"{number} ms \(needs ≤ 0\.0000 ms\)", out), out  # the table
    assert re.search(rf"latency_p95 = {number} ms misses <= 0 ms", out), out  # why it failed
    # before → after, Δ and its interval, in the table and the markdown report alike
    compared = rf"{number} ms → {number} ms: Δ {number} ms \[{number}, {number}\] ms"
    assert re.search(compared, out), out
    assert re.search(compared, (project / "r.md").read_text())
