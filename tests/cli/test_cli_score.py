"""`evalkit score RUN QRELS` and its older spelling `evalkit run --trec-run RUN --qrels QRELS`.

The two are one use case (:func:`evalkit._app.trec.score_trec_file`): for every input,
good or bad, they must print the same lines, exit with the same code and write the same
artefact.  Each spelling runs in a folder of its own holding the same files under the
same names, so even the paths they print agree.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalkit._spec.trec import write_qrels, write_run
from helpers.cli import evalkit

REPO = Path(__file__).resolve().parents[2]
TREC = REPO / "examples" / "trec"

# (name, extra arguments after RUN QRELS, the exit code both must end with)
CASES = [
    ("scored", ["--metrics", "ndcg@10,map@100", "--out", "out.json"], 0),
    ("notes", ["--metrics", "recall@10", "--out", "out.json"], 0),
    ("qrels-queries", ["--metrics", "recall@10", "--queries", "qrels", "--out", "out.json"], 0),
    ("graded", ["--metrics", "ndcg@10", "--relevance-level", "2", "--out", "out.json"], 0),
    ("unknown-metric", ["--metrics", "ndcg@10,prec@5", "--out", "out.json"], 2),
    ("no-metric", ["--metrics", " , ", "--out", "out.json"], 2),
    ("bad-queries", ["--metrics", "ndcg@10", "--queries", "qrel", "--out", "out.json"], 2),
    ("out-is-input", ["--metrics", "ndcg@10", "--out", "qrels.txt"], 2),
]


def _files(root: Path, name: str) -> None:
    if name in ("notes", "qrels-queries"):
        # judged query 3 is unranked; the run ranks a query nobody judged
        write_qrels(root / "qrels.txt", {"1": {"a": 1}, "2": {"b": 1, "c": 2}, "3": {"d": 1}})
        write_run(root / "run.txt", {"1": {"a": 2.0, "x": 1.0}, "2": {"c": 1.0}, "s": {"a": 1.0}})
    else:
        shutil.copy(TREC / "run.txt", root / "run.txt")
        shutil.copy(TREC / "qrels.txt", root / "qrels.txt")


def _spelled(old: bool, extra: list[str]) -> list[str]:
    if not old:
        return ["score", "run.txt", "qrels.txt", *extra]
    return ["run", "--trec-run", "run.txt", "--qrels", "qrels.txt", *extra]


def _written(root: Path) -> dict[str, object] | None:
    out = root / "out.json"
    if not out.exists():
        return None
    doc: dict[str, object] = json.loads(out.read_text(encoding="utf-8"))
    doc.pop("created_at", None)  # the only field that may differ between two runs
    return doc


@pytest.mark.parametrize(("name", "extra", "code"), CASES, ids=[c[0] for c in CASES])
def test_both_spellings_say_and_write_the_same(
    tmp_path: Path, name: str, extra: list[str], code: int
) -> None:
    seen = []
    for old in (False, True):
        root = tmp_path / ("old" if old else "new")
        root.mkdir()
        _files(root, name)
        result = evalkit(*_spelled(old, extra), cwd=root)
        seen.append((result.returncode, result.stdout, result.stderr, _written(root)))
    (new_code, new_out, new_err, new_doc), old_seen = seen
    assert seen[0] == old_seen
    assert new_code == code, new_err
    if code == 0:
        assert new_out.startswith("wrote out.json (")
        assert new_doc is not None
    else:
        assert new_out == ""
        assert len(new_err.splitlines()) == 1  # one line, no traceback
        assert new_doc is None


def test_the_notes_name_the_queries_the_files_do_not_share(tmp_path: Path) -> None:
    _files(tmp_path, "notes")
    result = evalkit("score", "run.txt", "qrels.txt", "--metrics", "recall@10", "--out", "o.json",
                     cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout == "wrote o.json (2 queries scored from run.txt)\n"
    assert result.stderr.splitlines() == [
        "evalkit: note: 1 judged query with no ranking in run.txt left out: 3; "
        "--queries qrels scores them as 0 (trec_eval -c)",
        "evalkit: note: 1 ranked query not in the qrels left out: s",
    ]


@pytest.mark.parametrize(
    "args",
    [
        ["score", "run.txt", "--metrics", "ndcg@10", "--out", "o.json"],  # no QRELS
        ["score", "run.txt", "qrels.txt", "--out", "o.json"],  # no --metrics
        ["score", "run.txt", "qrels.txt", "--metrics", "ndcg@10"],  # no --out
        ["score", "run.txt", "qrels.txt", "--metrics", "ndcg@10", "--out", "o.json", "--resume"],
    ],
)
def test_score_refuses_a_missing_or_foreign_argument_in_one_line(
    tmp_path: Path, args: list[str]
) -> None:
    _files(tmp_path, "scored")
    result = evalkit(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert "evalkit score --help" in result.stderr
    assert not (tmp_path / "o.json").exists()


def test_the_old_spelling_still_refuses_target_flags_and_missing_flags(tmp_path: Path) -> None:
    _files(tmp_path, "scored")
    resumed = evalkit(*_spelled(True, ["--metrics", "ndcg@10", "--out", "o.json", "--resume"]),
                      cwd=tmp_path)  # fmt: skip
    assert resumed.returncode == 2
    assert "--resume applies to running a target" in resumed.stderr
    partial = evalkit("run", "--trec-run", "run.txt", "--out", "o.json", cwd=tmp_path)
    assert partial.returncode == 2
    assert partial.stderr == "evalkit: scoring a TREC run needs --qrels, --metrics\n"


@pytest.mark.parametrize(("metrics", "code"), [("ndcg@10", 0), ("prec@5", 2)])
def test_the_console_script_ends_at_once_after_scoring(
    tmp_path: Path, metrics: str, code: int
) -> None:
    # A scored file leaves nothing to tear down: the process ends once its output is
    # flushed (an atexit handler does not run), with every line said; a refusal ends as
    # any command does.
    import subprocess
    import sys

    write_qrels(tmp_path / "q.txt", {"1": {"a": 1}})
    write_run(tmp_path / "r.txt", {"1": {"a": 2.0, "x": 1.0}})
    argv = ["score", "r.txt", "q.txt", "--metrics", metrics, "--out", "out.json"]
    script = (
        "import atexit, sys\natexit.register(lambda: print('torn down'))\n"
        f"sys.argv = ['evalkit', *{argv!r}]\n"
        "from evalkit.cli import process_main\nprocess_main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == code
    if code == 0:
        assert done.stdout == "wrote out.json (1 queries scored from r.txt)\n"
        assert json.loads((tmp_path / "out.json").read_text())
    else:
        assert done.stdout == "torn down\n"
        assert "prec@5" in done.stderr
