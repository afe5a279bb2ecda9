"""The CLI's exit codes, and one readable stderr line per bad input.

In process through ``main(argv)`` (tests/helpers/cli.py), except where the process is the
point: start-up and ``--help``, a stdout whose reader is gone, the exit status a shell sees.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fakes import unused_port
from helpers.artefact_docs import load_artefact
from helpers.cli import evalkit, evalkit_process, process_env, write_files
from helpers.tiny_project import CHECKS, CONFIG, GOLDENS, TARGET_MODULE, one_line_error

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "custom_client"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    files = {"tiny_target.py": TARGET_MODULE, "goldens.jsonl": GOLDENS, "checks.yaml": CHECKS}
    return write_files(tmp_path, {**files, "evalkit.yaml": CONFIG})


# ------------------------------------------------------------------------- happy paths


def test_help_is_fast_and_lists_commands(project: Path) -> None:
    result = evalkit_process("--help", cwd=project)
    assert result.returncode == 0
    for command in ("run", "gate", "compare", "show"):
        assert command in result.stdout


def test_run_then_gate_against_itself_passes(project: Path) -> None:
    run = evalkit("run", "--out", "base.json", cwd=project)
    assert run.returncode == 0, run.stderr
    assert (project / "base.json").exists()
    gate = evalkit(
        "gate", "--baseline", "base.json", "--markdown", "r.md", "--json", "r.json", cwd=project
    )
    assert gate.returncode == 0, gate.stderr
    assert "no_regression" in gate.stdout
    assert (project / "r.md").read_text().startswith("<!-- evalkit report config=evalkit -->")
    assert json.loads((project / "r.json").read_text())["verdict"] == "pass"


def test_a_gate_report_given_where_a_run_artefact_belongs_is_named(project: Path) -> None:
    assert evalkit("run", "--out", "base.json", cwd=project).returncode == 0
    gate = evalkit("gate", "--baseline", "base.json", "--json", "r.json", cwd=project)
    assert gate.returncode == 0, gate.stderr
    for command in (("show", "r.json"), ("compare", "base.json", "r.json")):
        result = evalkit(*command, cwd=project)
        one_line_error(result, 2, "r.json", "is a gate report", "evalkit run --out")


def test_a_mistyped_metric_name_gets_a_suggestion_before_anything_runs(project: Path) -> None:
    config = project / "evalkit.yaml"
    config.write_text(CONFIG.replace("ndcg@10", "ndgc@10"))
    result = evalkit("run", "--out", "a.json", cwd=project)
    one_line_error(result, 2, "unknown metric 'ndgc@10'", "did you mean 'ndcg@10'?")
    assert not (project / "a.json").exists()


def test_gate_without_baseline_reports_no_baseline(project: Path) -> None:
    gate = evalkit("gate", cwd=project)
    assert gate.returncode == 0, gate.stderr
    assert "no baseline" in gate.stdout.lower()


def test_gate_require_baseline_blocks(project: Path) -> None:
    gate = evalkit("gate", "--require-baseline", cwd=project)
    assert gate.returncode == 1


def test_gate_failing_threshold_exits_one(project: Path) -> None:
    (project / "checks.yaml").write_text(CHECKS.replace('op: ">="', 'op: "<="'))
    gate = evalkit("gate", cwd=project)
    assert gate.returncode == 1
    assert "floor" in gate.stdout


def test_compare_and_show(project: Path) -> None:
    assert evalkit("run", "--out", "a.json", cwd=project).returncode == 0
    assert evalkit("run", "--out", "b.json", cwd=project).returncode == 0
    compare = evalkit("compare", "a.json", "b.json", "--n-resamples", "200", cwd=project)
    assert compare.returncode == 0, compare.stderr
    assert "ndcg@10" in compare.stdout
    show = evalkit("show", "a.json", cwd=project)
    assert show.returncode == 0
    assert "recall@1" in show.stdout


def test_debug_shows_traceback(project: Path) -> None:
    result = evalkit("--debug", "gate", "--config", "missing.yaml", cwd=project)
    assert result.returncode != 0
    assert "Traceback" in result.stderr


@pytest.mark.parametrize("how", ["--debug first", "--debug last", "EVALKIT_DEBUG"])
def test_debug_keeps_the_exit_code_of_a_bad_input(project: Path, how: str) -> None:
    args = ["--debug"] if how == "--debug first" else []
    env = {"EVALKIT_DEBUG": "1"} if how == "EVALKIT_DEBUG" else {}
    command = ["gate", "--config", "missing.yaml", *(["--debug"] if how == "--debug last" else [])]
    result = evalkit(*args, *command, cwd=project, env=env)
    assert result.returncode == 2, result.stderr
    assert "Traceback" in result.stderr
    assert result.stderr.splitlines()[-1] == (
        "evalkit: missing.yaml: config file not found (pass --config PATH)"
    )
    usage = evalkit(*args, "gate", "--no-such-flag", cwd=project, env=env)
    assert usage.returncode == 2


def test_version_prints_the_package_version(project: Path) -> None:
    from evalkit import __version__

    result = evalkit("--version", cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"evalkit {__version__}\n"
    assert "--version" in evalkit("--help", cwd=project).stdout


def evalkit_into_closed_pipe(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run evalkit with a stdout whose reader is already gone, as `| head -1` leaves it.

    The read end is closed before the process starts, so its first write fails:
    no timing decides whether the pipe is still open.
    """
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [sys.executable, "-m", "evalkit", *args],
            cwd=cwd,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env=process_env(),
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)


def test_a_closed_stdout_is_not_a_failed_check(project: Path) -> None:
    passed = evalkit_into_closed_pipe("gate", "--json", "pass.json", cwd=project)
    assert (passed.returncode, passed.stderr) == (0, "")
    # no baseline: the vs_baseline check is no-baseline, so the headline is warn (exit 0)
    assert json.loads((project / "pass.json").read_text())["verdict"] == "warn"
    # the gate's own exit code survives, and its reports are still written
    blocked = evalkit_into_closed_pipe(
        "gate", "--require-baseline", "--json", "fail.json", cwd=project
    )
    assert (blocked.returncode, blocked.stderr) == (1, "")
    assert json.loads((project / "fail.json").read_text())["verdict"] == "fail"
    assert evalkit("run", "--out", "a.json", cwd=project).returncode == 0
    shown = evalkit_into_closed_pipe("show", "a.json", cwd=project)
    assert (shown.returncode, shown.stderr) == (0, "")


# ------------------------------------------------------------------------- bad inputs


def edit(project: Path, name: str, old: str, new: str) -> None:
    path = project / name
    path.write_text(path.read_text().replace(old, new))


def test_bad_missing_config(project: Path) -> None:
    one_line_error(
        evalkit("gate", "--config", "nope.yaml", cwd=project), 2, "nope.yaml", "not found"
    )


# A file of the project broken one way each (replaced text, a new content, or removed):
# `evalkit gate` says what is wrong in one line and exits 2.
BROKEN = [
    ("evalkit.yaml", "goldens: [oops\n", ("evalkit.yaml:", "invalid YAML")),
    ("evalkit.yaml", ("n_resamples: 500\n", "n_resamples: 500\nsed: 4\n"), ("unknown key 'sed'",)),
    ("goldens.jsonl", None, ("goldens.jsonl",)),
    ("goldens.jsonl", GOLDENS + "{not json\n", ("goldens.jsonl:4",)),
    ("goldens.jsonl", "", ("goldens.jsonl",)),
    ("goldens.jsonl", GOLDENS + '{"id": "a", "query": "again"}\n', ("'a'",)),
    ("checks.yaml", None, ("checks.yaml",)),
    ("checks.yaml", ("threshold: 0.5", "treshold: 0.5"), ("treshold",)),
    (
        "checks.yaml",
        ("threshold: 0.5", "threshold: 0.5\n    vs_baseline: no_significant_regression"),
        ("floor",),
    ),
    ("checks.yaml", ("metric: recall@1", "metric: recall@5"), ("recall@5", "does not compute")),
    (
        "evalkit.yaml",
        ("[recall@1, ndcg@10]", "[recall@1, ndcg@10, precisionn@3]"),
        ("precisionn@3",),
    ),
    ("checks.yaml", ('op: ">="', 'scope: [a, zz]\n    op: ">="'), ("zz",)),
    (
        "evalkit.yaml",
        ("n_resamples: 500\n", "n_resamples: 500\nplugins: [no_such_plugin_x]\n"),
        ("no_such_plugin_x",),
    ),
    ("evalkit.yaml", ("tiny_target:make_target", "tiny_target:nope"), ("nope",)),
    (
        "evalkit.yaml",
        (
            '  python: "tiny_target:make_target"',
            '  http: {url: "http://${EVALKIT_CLI_TEST_HOST}/s", extract: "results[].id"}',
        ),
        ("EVALKIT_CLI_TEST_HOST",),
    ),
    (
        "evalkit.yaml",
        ("n_resamples: 500\n", "n_resamples: 500\njudge: {metric: h, model: m}\n"),
        ("rubric",),
    ),
]


@pytest.mark.parametrize(("name", "change", "needles"), BROKEN)
def test_bad_project_files(
    project: Path, name: str, change: str | tuple[str, str] | None, needles: tuple[str, ...]
) -> None:
    path = project / name
    if change is None:
        path.unlink()
    elif isinstance(change, str):
        path.write_text(change)
    else:
        assert change[0] in path.read_text()  # the edit breaks what it names
        edit(project, name, *change)
    one_line_error(evalkit("gate", cwd=project), 2, *needles)


def test_a_misspelt_check_metric_gets_a_did_you_mean_and_its_line(project: Path) -> None:
    edit(project, "checks.yaml", "metric: ndcg@10", "metric: ndgc@10")
    one_line_error(
        evalkit("gate", cwd=project),
        2,
        "checks.yaml:6: check 'no_regression' names metric 'ndgc@10' (did you mean 'ndcg@10'?)",
        "correct the name or add it there",
    )


def test_a_case_filter_in_other_letter_case_names_the_id(project: Path) -> None:
    one_line_error(
        evalkit("gate", "--case", "A", cwd=project),
        2,
        "no case 'A'",
        "did you mean 'a'? it differs only in letter case",
    )


def test_bad_missing_candidate_artefact(project: Path) -> None:
    one_line_error(evalkit("gate", "--candidate", "none.json", cwd=project), 2, "none.json")


def test_bad_wrong_artefact_version(project: Path) -> None:
    assert evalkit("run", "--out", "c.json", cwd=project).returncode == 0
    doc = json.loads((project / "c.json").read_text())
    doc["schema_version"] = 999
    (project / "c.json").write_text(json.dumps(doc))
    one_line_error(evalkit("gate", "--candidate", "c.json", cwd=project), 2, "schema_version 999")


def test_bad_truncated_artefact(project: Path) -> None:
    assert evalkit("run", "--out", "c.json", cwd=project).returncode == 0
    data = (project / "c.json").read_text()
    (project / "c.json").write_text(data[: len(data) // 2])
    one_line_error(
        evalkit("gate", "--candidate", "c.json", cwd=project), 2, "c.json", "not valid JSON"
    )


def test_bad_nan_in_artefact(project: Path) -> None:
    assert evalkit("run", "--out", "c.json", cwd=project).returncode == 0
    data = (project / "c.json").read_text().replace('"recall@1":1.0', '"recall@1":NaN', 1)
    (project / "c.json").write_text(data)
    one_line_error(evalkit("gate", "--candidate", "c.json", cwd=project), 2, "NaN")


def test_bad_hand_broken_baseline(project: Path) -> None:
    (project / "b.json").write_text('{"schema_version": 1, "rows": "nope"}')
    one_line_error(evalkit("gate", "--baseline", "b.json", cwd=project), 2, "b.json")


def test_bad_unknown_option(project: Path) -> None:
    one_line_error(evalkit("gate", "--bogus", cwd=project), 2, "--bogus")


def test_bad_show_non_artefact(project: Path) -> None:
    (project / "x.json").write_text("[]")
    one_line_error(evalkit("show", "x.json", cwd=project), 2, "x.json")


def test_unreachable_http_target_exits_three(project: Path) -> None:
    port = unused_port()
    edit(
        project,
        "evalkit.yaml",
        '  python: "tiny_target:make_target"',
        f'  http: {{url: "http://127.0.0.1:{port}/s", extract: "results[].id", timeout_s: 2}}',
    )
    result = evalkit("run", "--out", "c.json", cwd=project)
    one_line_error(result, 3, "all 3 case(s) failed", "127.0.0.1")


def test_gate_and_compare_write_self_contained_html(project: Path) -> None:
    assert evalkit("run", "--out", "base.json", cwd=project).returncode == 0
    gate = evalkit("gate", "--baseline", "base.json", "--html", "gate.html", cwd=project)
    assert gate.returncode == 0, gate.stderr
    page = (project / "gate.html").read_text()
    assert page.startswith("<!DOCTYPE html>") or page.lower().startswith("<!doctype html>")
    assert "<svg" in page
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    compare = evalkit(
        "compare",
        "base.json",
        "base.json",
        "--n-resamples",
        "200",
        "--html",
        "cmp.html",
        cwd=project,
    )
    assert compare.returncode == 0, compare.stderr
    assert "<svg" in (project / "cmp.html").read_text()


def test_power_prints_the_detection_table(project: Path) -> None:
    assert evalkit("run", "--out", "a.json", cwd=project).returncode == 0
    result = evalkit("power", "a.json", "--metric", "ndcg@10", "--n-sim", "50", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "σ_d" in result.stdout
    assert "true effect" in result.stdout
    assert "detected" in result.stdout


@pytest.mark.parametrize("width", ["60", "80"])
def test_power_wraps_its_sentences_at_words_to_the_terminal(project: Path, width: str) -> None:
    """A single run's σ_d sentence is 240 characters: at 80 columns the terminal would
    break it mid-word; it is wrapped at spaces instead, every word kept."""
    assert evalkit("run", "--out", "a.json", cwd=project).returncode == 0
    args = ("power", "a.json", "--metric", "ndcg@10", "--n-sim", "20")
    narrow = evalkit(*args, cwd=project, env={"COLUMNS": width})
    wide = evalkit(*args, cwd=project, env={"COLUMNS": None})
    assert narrow.returncode == wide.returncode == 0, narrow.stderr + wide.stderr
    assert max(len(line) for line in narrow.stdout.splitlines()) <= int(width)
    assert max(len(line) for line in wide.stdout.splitlines()) > 200  # a pipe: unwrapped
    assert narrow.stdout.split() == wide.stdout.split()


def test_export_writes_csv(project: Path) -> None:
    assert evalkit("run", "--out", "a.json", cwd=project).returncode == 0
    result = evalkit("export", "a.json", "--csv", "rows.csv", cwd=project)
    assert result.returncode == 0, result.stderr
    lines = (project / "rows.csv").read_text().splitlines()
    assert len(lines) == 4
    assert "recall@1" in lines[0]


def test_export_csv_dash_writes_the_rows_to_stdout_and_no_file(project: Path) -> None:
    assert evalkit("run", "--out", "a.json", cwd=project).returncode == 0
    assert evalkit("export", "a.json", "--csv", "rows.csv", cwd=project).returncode == 0
    before = sorted(p.name for p in project.iterdir())
    result = evalkit("export", "a.json", "--csv", "-", cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout == (project / "rows.csv").read_text()  # the CSV and nothing else
    assert sorted(p.name for p in project.iterdir()) == before  # no file named '-'


def test_run_scores_a_trec_run_file_without_a_target(tmp_path: Path) -> None:
    trec = REPO / "examples" / "trec"
    result = evalkit(
        "run",
        "--trec-run",
        str(trec / "run.txt"),
        "--qrels",
        str(trec / "qrels.txt"),
        "--metrics",
        "ndcg@10,map@100",
        "--out",
        "trec.json",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    doc = load_artefact(tmp_path / "trec.json")
    assert doc["path"] == "retrieval"
    by_id = {row["id"]: row["metrics"] for row in doc["rows"]}
    assert by_id["q3"]["map@100"] == 0.5
    assert by_id["q1"]["map@100"] == 1.0


def test_bad_trec_run_without_qrels(tmp_path: Path) -> None:
    trec = REPO / "examples" / "trec"
    result = evalkit("run", "--trec-run", str(trec / "run.txt"), "--out", "x.json", cwd=tmp_path)
    one_line_error(result, 2, "--qrels", "--metrics")
