"""The CLI as a user meets it: case filters, config typos, report wording (subprocess tests)."""

from __future__ import annotations

import json
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
