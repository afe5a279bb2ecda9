"""Output paths no file can be written at: one line, exit 2, refused before anything runs.

``a.json/run.json`` where ``a.json`` is a file, a folder given where a file is
expected, and a folder that is not writable are the user's to fix (exit 2), are
named in the message, and are found before the target runs, so nothing is spent
and nothing already on disk is touched.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evalkit._util.atomic import write_bytes_atomic
from evalkit.errors import InputError
from helpers.cli import evalkit
from helpers.tiny_project import CHECKS, CONFIG, GOLDENS, one_line_error

# A target that leaves a mark for every case it runs, to prove none ran.
COUNTING_TARGET = """
from pathlib import Path
from evalkit import CallableTarget

def make_target():
    def rank(case):
        with open("calls.log", "a") as fh:
            fh.write(case.id + "\\n")
        return ["d1", "d2", "d3"]
    return CallableTarget(rank, name="counting")
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "tiny_target.py").write_text(COUNTING_TARGET)
    (tmp_path / "goldens.jsonl").write_text(GOLDENS)
    (tmp_path / "checks.yaml").write_text(CHECKS)
    (tmp_path / "evalkit.yaml").write_text(CONFIG)
    result = evalkit("run", "--out", "good.json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    (tmp_path / "calls.log").unlink()
    (tmp_path / "a.json").write_text("precious\n")
    (tmp_path / "adir").mkdir()
    return tmp_path


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


THROUGH_A_FILE = "cannot write there: a.json is a file, not a folder"
A_FOLDER = "adir: is a folder, not a file"


@pytest.mark.parametrize(
    ("args", "culprit", "needle"),
    [
        (["run", "--out", "a.json/run.json"], "a.json/run.json", THROUGH_A_FILE),
        (["run", "--out", "a.json/deeper/run.json"], "a.json/deeper/run.json", THROUGH_A_FILE),
        (["run", "--out", "adir"], "adir", A_FOLDER),
        (["export", "good.json", "--csv", "a.json/rows.csv"], "a.json/rows.csv", THROUGH_A_FILE),
        (["export", "good.json", "--csv", "adir"], "adir", A_FOLDER),
        (["gate", "--out", "a.json/c.json"], "a.json/c.json", THROUGH_A_FILE),
        (["gate", "--markdown", "a.json/r.md"], "a.json/r.md", THROUGH_A_FILE),
        (["gate", "--json", "adir"], "adir", A_FOLDER),
        (["gate", "--candidate", "good.json", "--html", "a.json/r.html"], "a.json/r.html", ""),
        (["compare", "good.json", "good.json", "--html", "adir"], "adir", A_FOLDER),
        (["merge", "good.json", "--out", "a.json/m.json"], "a.json/m.json", THROUGH_A_FILE),
        (
            [
                *("run", "--trec-run", "r.trec", "--qrels", "q.trec"),
                *("--metrics", "ndcg@10", "--out", "a.json/s.json"),
            ],
            "a.json/s.json",
            THROUGH_A_FILE,
        ),
    ],
)
def test_an_output_path_that_cannot_hold_a_file_is_refused_up_front(
    project: Path, args: list[str], culprit: str, needle: str
) -> None:
    (project / "r.trec").write_text("a Q0 d1 1 1.0 t\n")
    (project / "q.trec").write_text("a 0 d1 1\n")
    before = snapshot(project)
    result = evalkit(*args, cwd=project)
    one_line_error(result, 2, culprit, needle)
    assert not (project / "calls.log").exists(), "the target ran before the path was checked"
    assert snapshot(project) == before


@pytest.mark.skipif(not Path("/sys/kernel").is_dir(), reason="needs Linux sysfs")
def test_an_unwritable_folder_is_refused(project: Path) -> None:
    # sysfs refuses new files even to root, so this holds in any container.
    result = evalkit("export", "good.json", "--csv", "/sys/kernel/rows.csv", cwd=project)
    one_line_error(result, 2, "/sys/kernel/rows.csv", "cannot write there")


def test_the_atomic_writer_names_the_path_for_the_library_too(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("keep")
    with pytest.raises(
        InputError, match=r"a\.json/x\.json: cannot write there: .*a\.json is a file"
    ):
        write_bytes_atomic(tmp_path / "a.json" / "x.json", b"{}")
    (tmp_path / "d").mkdir()
    with pytest.raises(InputError, match=r"d: is a folder, not a file"):
        write_bytes_atomic(tmp_path / "d", b"{}")
    assert (tmp_path / "a.json").read_text() == "keep"
    assert sorted(os.listdir(tmp_path)) == ["a.json", "d"]  # no temp file left behind
