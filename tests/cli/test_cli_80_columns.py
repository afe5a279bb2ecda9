"""At COLUMNS=80 every command a reviewer reads fits: no line wider than 80, none ending
in a space (issue 44), on the examples and on the 300-case report fixture.

Each command runs in process through ``main(argv)`` with ``COLUMNS=80``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalkit._spec.artifact import write_artifact
from helpers.cli import evalkit, write_files
from helpers.history_runs import run, sha_of
from helpers.tiny_project import CHECKS, CONFIG, GOLDENS, TARGET_MODULE

ROOT = Path(__file__).parents[2]
FIXTURE = Path(__file__).parents[1] / "data" / "report300"
EXAMPLES = ROOT / "examples"
NARROW = {"COLUMNS": "80", "GITHUB_TOKEN": "", "GH_TOKEN": "", "GITHUB_REPOSITORY": ""}


def fits(text: str, what: str) -> None:
    bad = [
        (len(line), line) for line in text.splitlines() if len(line) > 80 or line != line.rstrip()
    ]
    assert not bad, (what, bad)


@pytest.fixture(scope="module")
def fixture300(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 300-case fixture copied out, so its runs are written beside it, not in the tree."""
    dest = tmp_path_factory.mktemp("report300") / "report300"
    shutil.copytree(FIXTURE, dest)
    return dest


@pytest.mark.parametrize("config", ["evalkit.yaml", "evalkit-fail.yaml"])
def test_the_300_case_fixture_at_80_columns(fixture300: Path, config: str) -> None:
    out = f"{config}.run.json"  # relative: a path is one word, never broken
    gated = evalkit("gate", "--config", config, "--out", out, cwd=fixture300, env=NARROW)
    assert gated.returncode == (0 if config == "evalkit.yaml" else 1), gated.stderr
    fits(gated.stdout, config)
    # before anything ran: the margin the eval cannot resolve, with its fix, on stderr
    said = " ".join(gated.stderr.split())
    assert said.startswith("⚠ ndcg_not_worse: margin 0.0050 is too tight for 300 cases")
    assert "(Estimated before the run from the baseline's spread.)" in said
    fits(gated.stderr, "stderr")
    lines = gated.stdout.splitlines()
    # the header: the verdict, then (the margin is too tight) the risk, in two lines
    assert lines[0].startswith(("PASS: 3 of 3", "FAIL: 1 of 3"))
    assert lines[1].startswith("Unchanged runs fail this gate up to ")
    assert lines[1].endswith("ndcg_not_worse's margin is too tight.")
    assert lines[2].startswith("Candidate ")
    # the check carries its fix, and the slice lines are there
    flat = " ".join(gated.stdout.split())
    assert "margin 0.0050 is too tight for 300 cases" in flat
    assert "Use a margin of at least" in flat
    assert "tags=tail" in flat
    assert "p=0.9" not in flat.split("Slices:", 1)[1] or "improved" not in flat
    for command in (
        ("compare", out, "baseline.json"),
        ("compare", out, "baseline.json", "--by", "tags"),
        ("show", out),
        ("show", out, "--case", "36", "--config", config),
        ("power", out, "baseline.json", "--metric", "ndcg@10", "--n-sim", "50"),
    ):
        done = evalkit(*command, cwd=fixture300, env=NARROW)
        assert done.returncode == 0, (command, done.stderr)
        fits(done.stdout, " ".join(map(str, command)))


def test_show_case_on_slice_tagged_goldens_does_not_say_changed(fixture300: Path) -> None:
    """The run hashes a case without its slice fields, as the gate does: so does show."""
    out = fixture300 / "show.run.json"
    ran = evalkit("run", "--config", "evalkit.yaml", "--out", out, cwd=fixture300, env=NARROW)
    assert ran.returncode == 0, ran.stderr
    shown = evalkit("show", out, "--case", "36", "--config", "evalkit.yaml", cwd=fixture300)
    assert shown.returncode == 0, shown.stderr
    assert "golden:    goldens.jsonl" in shown.stdout
    assert "changed in the golden file" not in shown.stdout
    # a real edit of the case is still flagged
    edited = fixture300 / "edited.jsonl"
    text = (fixture300 / "goldens.jsonl").read_text()
    edited.write_text(text.replace('"question 36"', '"question thirty-six"'))
    flagged = evalkit("show", out, "--case", "36", "--goldens", edited, cwd=fixture300)
    assert "this case changed in the golden file since the run" in flagged.stdout


@pytest.mark.parametrize(
    ("folder", "args", "code"),
    [
        ("custom_client", ("--baseline", "baseline.json"), 0),
        ("rag_answers", ("--judge-cache-only",), 0),
        ("slices", (), 1),
    ],
)
def test_the_examples_at_80_columns(
    tmp_path: Path, folder: str, args: tuple[str, ...], code: int
) -> None:
    out = tmp_path / "run.json"
    where = EXAMPLES / folder
    gated = evalkit("gate", "--config", "evalkit.yaml", *args, "--out", out, cwd=where, env=NARROW)
    assert gated.returncode == code, gated.stdout + gated.stderr
    fits(gated.stdout, folder)
    # the header fits in two lines: the verdict, and at most one line of risk
    head = gated.stdout.splitlines()
    assert head[0].startswith(("PASS:", "FAIL:", "WARN:"))
    assert head[1].startswith(("Candidate ", "Unchanged runs fail"))
    if head[1].startswith("Unchanged"):
        assert head[2].startswith("Candidate ")


def test_history_at_80_columns(tmp_path: Path) -> None:
    files = {"tiny_target.py": TARGET_MODULE, "goldens.jsonl": GOLDENS, "checks.yaml": CHECKS}
    config = CONFIG + "baseline: {path: baseline.json}\n"
    project = write_files(tmp_path, {**files, "evalkit.yaml": config})
    ids = [f"c{i:02d}" for i in range(12)]
    for k in range(3):
        values = {cid: {"ndcg@10": 0.3 + 0.05 * (i % 4) + 0.01 * k} for i, cid in enumerate(ids)}
        path = write_artifact(run(f"r{k}", values, sha=sha_of(k)), project / f"r{k}.json")
        assert evalkit("promote", path.name, cwd=project).returncode == 0
    assert evalkit("pin", "1 promotion ago", cwd=project).returncode == 0
    shown = evalkit("history", "--candidate", "r0.json", cwd=project, env=NARROW)
    assert shown.returncode == 0, shown.stderr
    assert "<- reference" in shown.stdout
    fits(shown.stdout, "history")
