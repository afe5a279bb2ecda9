"""The gate never passes on evidence it was not given (issue #11), through the CLI.

Every refusal: exit 2, exactly one stderr line naming the culprit file, check,
metric or case ids, no traceback, and no file the user had is rewritten.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from helpers.artefact_docs import dump_artefact, load_artefact
from helpers.cli import evalkit
from helpers.tiny_project import CHECKS, CONFIG, one_line_error

TARGET = """
from evalkit import CallableTarget

RANKINGS = {"a": ["d1", "d2"], "b": ["d3", "d1"], "c": ["d2", "d9"],
            "d": ["d4", "d1"], "e": ["d5", "d2"], "f": ["d9", "d6"]}


def make_target(shift: bool = False):
    def rank(case):
        ids = RANKINGS[case.id]
        return ids[::-1] if shift else ids
    return CallableTarget(rank, name="shifted" if shift else "plain")
"""

RELEVANT = {"a": "d1", "b": "d3", "c": "d2", "d": "d4", "e": "d5", "f": "d6"}
GOLDENS = "".join(
    json.dumps({"id": i, "query": f"query {i}", "relevant": [d]}) + "\n"
    for i, d in RELEVANT.items()
)

AGAINST_BASE = ("gate", "--candidate", "full.json", "--baseline", "base.json")


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real run artefact of the six-case project (made once per module)."""
    root = tmp_path_factory.mktemp("made")
    _write_project(root)
    result = evalkit("run", "--out", "full.json", cwd=root)
    assert result.returncode == 0, result.stderr
    return root / "full.json"


def _write_project(root: Path) -> None:
    (root / "tiny_target.py").write_text(TARGET)
    (root / "goldens.jsonl").write_text(GOLDENS)
    (root / "checks.yaml").write_text(CHECKS)
    (root / "evalkit.yaml").write_text(CONFIG)


@pytest.fixture
def project(tmp_path: Path, made: Path) -> Path:
    _write_project(tmp_path)
    (tmp_path / "full.json").write_bytes(made.read_bytes())
    return tmp_path


def derive(project: Path, name: str, change: Callable[[dict[str, Any]], None]) -> Path:
    """A copy of full.json with ``change`` applied to its document."""
    doc = load_artefact(project / "full.json")
    change(doc)
    return dump_artefact(doc, project / name)


def drop_metric(metric: str) -> Callable[[dict[str, Any]], None]:
    """A change that removes ``metric`` from an artefact document entirely."""

    def change(doc: dict[str, Any]) -> None:
        del doc["metrics"][metric]
        for row in doc["rows"]:
            del row["metrics"][metric]

    return change


def fail_rows(doc: dict[str, Any], ids: set[str]) -> None:
    for row in doc["rows"]:
        if row["id"] in ids:
            row.update(error="target 'plain' failed: HTTP 503", metrics={}, ids=None, text=None)


def digests(project: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(project.iterdir())
        if p.is_file()
    }


def refused(project: Path, *args: str, needles: tuple[str, ...]) -> None:
    """Exit 2, one named line, and every file as it was; no report was written."""
    before = digests(project)
    result = evalkit(*args, "--json", "report.json", "--markdown", "report.md", cwd=project)
    one_line_error(result, 2, *needles)
    assert digests(project) == before
    assert not (project / ".evalkit").exists()


# ------------------------------------------------------------------------- coverage


def test_the_missing_ids_are_capped_on_one_line(project: Path) -> None:
    many = "".join(json.dumps({"id": f"x{i:03d}", "query": f"extra {i}"}) + "\n" for i in range(40))
    (project / "goldens.jsonl").write_text(GOLDENS + many)
    result = evalkit("gate", "--candidate", "full.json", cwd=project)
    one_line_error(result, 2, "no row for 40 of the 46", "x000", "(+30 more)")
    assert "x039" not in result.stderr


def test_a_candidate_with_rows_for_cases_the_goldens_lack_is_refused(project: Path) -> None:
    (project / "goldens.jsonl").write_text("".join(GOLDENS.splitlines(True)[:5]))
    refused(project, "gate", "--candidate", "full.json", needles=("full.json", "f", "another"))


def test_a_complete_fresh_candidate_still_passes(project: Path) -> None:
    (project / "base.json").write_bytes((project / "full.json").read_bytes())
    result = evalkit(*AGAINST_BASE, cwd=project)
    assert result.returncode == 0, result.stderr
    assert "Every check covered all 6 cases." in result.stdout  # the coverage, said once


# ------------------------------------------------------------------------- stale candidate


def test_a_candidate_made_before_a_query_was_edited_is_refused(project: Path) -> None:
    path = project / "goldens.jsonl"
    path.write_text(path.read_text().replace('"query c"', '"query c, reworded"'))
    refused(
        project,
        "gate",
        "--candidate",
        "full.json",
        needles=("full.json", "stale", "1 golden case(s) changed", ": c;"),
    )


# ------------------------------------------------------------------------- baseline


def test_an_explicit_baseline_sharing_no_case_is_an_input_error(project: Path) -> None:
    def other_set(doc: dict[str, Any]) -> None:
        for row in doc["rows"]:
            row["id"] = "other-" + row["id"]
        doc["goldens"]["cases"] = {"other-" + k: v for k, v in doc["goldens"]["cases"].items()}

    derive(project, "base.json", other_set)
    refused(
        project,
        *AGAINST_BASE,
        needles=("base.json", "no_regression", "shares none of the 6", "other-a"),
    )


def test_an_explicit_baseline_whose_cases_all_failed_says_they_failed(project: Path) -> None:
    derive(project, "base.json", lambda d: fail_rows(d, set(RELEVANT)))
    needles = ("base.json", "6 baseline case(s) failed", "a, b, c, d, e, f")
    refused(project, *AGAINST_BASE, needles=needles)


def test_the_configured_file_baseline_is_held_to_the_same_rule(project: Path) -> None:
    derive(project, "base.json", lambda d: fail_rows(d, set(RELEVANT)))
    (project / "evalkit.yaml").write_text(CONFIG + "baseline: {path: base.json}\n")
    refused(project, "gate", "--candidate", "full.json", needles=("base.json", "failed"))


def test_a_candidate_gated_against_itself_is_refused(project: Path) -> None:
    refused(
        project,
        "gate",
        "--candidate",
        "full.json",
        "--baseline",
        "./full.json",
        needles=("full.json", "the candidate itself"),
    )


def test_a_baseline_without_fingerprints_is_refused(project: Path) -> None:
    derive(project, "base.json", lambda d: d.update(goldens=None))
    refused(project, *AGAINST_BASE, needles=("base.json", "fingerprints"))


def test_a_baseline_from_another_config_is_refused(project: Path) -> None:
    derive(project, "base.json", lambda d: d.update(config_name="search-v2"))
    refused(
        project,
        *AGAINST_BASE,
        needles=("base.json", "'search-v2'"),
    )


def test_a_baseline_lacking_the_checked_metric_is_an_input_error(project: Path) -> None:
    derive(project, "base.json", drop_metric("ndcg@10"))
    refused(
        project,
        *AGAINST_BASE,
        needles=("base.json", "no_regression", "'ndcg@10'", "baseline"),
    )


def test_failed_baseline_cases_are_named_and_turn_a_pass_into_a_warning(project: Path) -> None:
    derive(project, "base.json", lambda d: fail_rows(d, {"a", "b"}))
    result = evalkit(
        "gate",
        "--candidate",
        "full.json",
        "--baseline",
        "base.json",
        "--json",
        "r.json",
        cwd=project,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "exist unchanged" not in result.stdout
    report = json.loads((project / "r.json").read_text())
    verdict = next(v for v in report["checks"] if v["id"] == "no_regression")
    assert verdict["status"] == "warn"
    assert "decided on 4 of 6 case(s); 2 baseline case(s) failed: a, b" in verdict["message"]
    assert any("2 baseline case(s) failed" in n and "base.json" in n for n in report["notes"])
    assert report["verdict"] == "warn"


def test_a_regression_on_the_paired_cases_still_fails_when_baseline_cases_failed(
    project: Path,
) -> None:
    def better_baseline(doc: dict[str, Any]) -> None:
        for row in doc["rows"]:
            row["metrics"]["ndcg@10"] = 1.0
        fail_rows(doc, {"a"})

    def worse_candidate(doc: dict[str, Any]) -> None:
        for row in doc["rows"]:
            row["metrics"]["ndcg@10"] = 0.2

    derive(project, "base.json", better_baseline)
    derive(project, "cand.json", worse_candidate)
    result = evalkit(
        "gate",
        "--candidate",
        "cand.json",
        "--baseline",
        "base.json",
        "--json",
        "r.json",
        cwd=project,
    )
    assert result.returncode == 1, (result.stdout, result.stderr)
    report = json.loads((project / "r.json").read_text())
    verdict = next(v for v in report["checks"] if v["id"] == "no_regression")
    assert verdict["status"] == "fail"
    assert "1 baseline case(s) failed: a" in verdict["message"]


# ------------------------------------------------------------------------- messages


def prefix_ids(doc: dict[str, Any]) -> None:
    """Another run's ids, consistent with its own goldens provenance."""
    for row in doc["rows"]:
        row["id"] = "z" + row["id"]
    goldens = doc["goldens"]
    goldens["cases"] = {"z" + case: digest for case, digest in goldens["cases"].items()}


def test_compare_of_runs_with_no_shared_case_names_both_files(project: Path) -> None:
    derive(project, "other.json", prefix_ids)
    result = evalkit("compare", "full.json", "other.json", cwd=project)
    one_line_error(result, 2, "full.json", "other.json", "share no case")
    assert "'plain'" not in result.stderr


def test_compare_against_a_run_whose_cases_all_failed_says_so(project: Path) -> None:
    derive(project, "failed.json", lambda d: fail_rows(d, set(RELEVANT)))
    result = evalkit("compare", "full.json", "failed.json", cwd=project)
    one_line_error(result, 2, "full.json", "failed.json", "failed")


@pytest.mark.parametrize(
    ("name", "content", "line"),
    [
        ("checks.yaml", CHECKS.replace("threshold: 0.5", "threshold: 0.5  # caf\xe9"), 5),
        ("evalkit.yaml", CONFIG.replace("n_resamples", "# \xff\nn_resamples"), 6),
    ],
)
def test_a_non_utf8_file_is_reported_at_its_line_and_byte(
    project: Path, name: str, content: str, line: int
) -> None:
    data = content.encode("latin-1")
    (project / name).write_bytes(data)
    offset = next(i for i, b in enumerate(data) if b >= 0x80)
    result = evalkit("gate", "--candidate", "full.json", cwd=project)
    one_line_error(result, 2, f"{name}:{line}:", "not valid UTF-8", f"offset {offset}")


def test_a_non_utf8_judge_rubric_file_is_named(project: Path) -> None:
    (project / "rubric.txt").write_bytes(b"Grade the answer \xff\n")
    (project / "evalkit.yaml").write_text(
        CONFIG + "judge: {metric: helpful, model: m, rubric_file: rubric.txt}\n"
    )
    result = evalkit("gate", "--candidate", "full.json", cwd=project)
    one_line_error(result, 2, "rubric.txt:1:", "not valid UTF-8")


# ------------------------------------------------------------------------- sweep: flags


def test_gate_refuses_run_flags_with_a_candidate(project: Path) -> None:
    refused(project, "gate", "--candidate", "full.json", "--out", "x.json", needles=("--out",))
    refused(
        project,
        "gate",
        "--candidate",
        "full.json",
        "--concurrency",
        "4",
        needles=("--concurrency",),
    )


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (("export", "full.json", "--csv", "./full.json"), ("--csv", "the artefact")),
        (("compare", "full.json", "full.json", "--html", "full.json"), ("--html", "run full.json")),
        (("run", "--out", "goldens.jsonl"), ("--out", "goldens file")),
        (("run", "--out", "checks.yaml"), ("--out", "checks file")),
        (("gate", "--candidate", "full.json", "--json", "full.json"), ("--json", "candidate")),
        (("gate", "--candidate", "full.json", "--markdown", "evalkit.yaml"), ("config",)),
        (
            ("gate", "--markdown", "r.txt", "--html", "r.txt", "--candidate", "full.json"),
            ("--html",),
        ),
    ],
)
def test_no_command_writes_over_its_own_input(
    project: Path, args: tuple[str, ...], needles: tuple[str, ...]
) -> None:
    before = digests(project)
    one_line_error(evalkit(*args, cwd=project), 2, *needles, "choose another path")
    assert digests(project) == before


def test_a_gate_whose_output_is_its_baseline_file_is_refused(project: Path) -> None:
    (project / "base.json").write_bytes((project / "full.json").read_bytes())
    (project / "evalkit.yaml").write_text(
        CONFIG + "output: base.json\nbaseline: {path: base.json}\n"
    )
    before = digests(project)
    one_line_error(evalkit("gate", cwd=project), 2, "output", "base.json", "baseline")
    assert digests(project) == before


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (
            ("compare", "full.json", "full.json", "--n-resamples", "100000000000"),
            ("--n-resamples",),
        ),
        (("compare", "full.json", "full.json", "--seed", "-1"), ("--seed",)),
        (("gate", "--concurrency", "100000"), ("--concurrency",)),
        (("power", "full.json", "--n", "1000000000000"), ("--n-sim", "simulated cases")),
        (("power", "full.json", "--n-sim", "1000000000"), ("--n-sim",)),
    ],
)
def test_absurd_numbers_on_the_command_line_are_refused(
    project: Path, args: tuple[str, ...], needles: tuple[str, ...]
) -> None:
    one_line_error(evalkit(*args, cwd=project), 2, *needles)


# ------------------------------------------------------------------------- sweep: config


@pytest.mark.parametrize(
    ("line", "needles"),
    [
        ("seed: -1", ("evalkit.yaml:6", "seed")),
        ("seed: true", ("evalkit.yaml:6", "seed")),
        ("n_resamples: 100000000000", ("evalkit.yaml:6", "n_resamples")),
        ("concurrency: 1000000000", ("evalkit.yaml:6", "concurrency")),
        ("concurrency: yes", ("evalkit.yaml:6", "concurrency")),
        ("rate_limit: .inf", ("evalkit.yaml:6", "rate_limit", "finite")),
        ("case_timeout_s: .inf", ("evalkit.yaml:6", "case_timeout_s", "finite")),
        ("require_baseline: 1", ("evalkit.yaml:6", "require_baseline")),
        ("output: ''", ("evalkit.yaml:6", "output")),
        ("name: ''", ("evalkit.yaml:6", "name")),
        ("name: ../../elsewhere", ("evalkit.yaml:6", "name")),
        ("python_path: [no_such_folder]", ("evalkit.yaml", "python_path", "no_such_folder")),
        (
            "judge: {metric: h, model: m, rubric: r, prices: {input: -1}}",
            ("evalkit.yaml:6", "prices"),
        ),
        (
            "judge: {metric: h, model: m, rubric: r, prices: {inptu: 3}}",
            ("evalkit.yaml:6", "prices", "inptu"),
        ),
        ("judge: {metric: h, model: m, rubric: r, scale: 5.5}", ("evalkit.yaml:6", "scale")),
    ],
)
def test_config_values_that_would_be_silently_misread_are_refused(
    project: Path, line: str, needles: tuple[str, ...]
) -> None:
    (project / "evalkit.yaml").write_text(CONFIG.replace("n_resamples: 500\n", "") + line + "\n")
    assert (project / "evalkit.yaml").read_text().splitlines()[5] == line
    one_line_error(evalkit("gate", "--candidate", "full.json", cwd=project), 2, *needles)


TREC = Path(__file__).resolve().parents[2] / "examples" / "trec"


@pytest.mark.parametrize(
    "extra",
    [("--concurrency", "4"), ("--resume",), ("--shard", "1/2"), ("--config", "other.yaml")],
)
def test_target_flags_are_refused_when_scoring_a_trec_file(
    tmp_path: Path, extra: tuple[str, ...]
) -> None:
    args = ("--trec-run", str(TREC / "run.txt"), "--qrels", str(TREC / "qrels.txt"))
    result = evalkit("run", *args, "--metrics", "ndcg@10", "--out", "t.json", *extra, cwd=tmp_path)
    one_line_error(result, 2, extra[0], "--trec-run")
    assert not (tmp_path / "t.json").exists()


def test_relevance_level_without_a_trec_file_is_refused(project: Path) -> None:
    before = digests(project)
    result = evalkit("run", "--relevance-level", "2", "--out", "r.json", cwd=project)
    one_line_error(result, 2, "--relevance-level", "--trec-run")
    assert digests(project) == before


def test_power_names_both_files_when_they_cannot_be_paired(project: Path) -> None:
    derive(project, "other.json", prefix_ids)
    result = evalkit("power", "full.json", "other.json", "--n-sim", "10", cwd=project)
    one_line_error(result, 2, "full.json vs other.json")


# ------------------------------------------------------------------------- sweep: artefacts


def _set_metric_field(field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        doc["metrics"]["ndcg@10"][field] = value

    return change


def _first_row(field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        doc["rows"][0][field] = value

    return change


@pytest.mark.parametrize(
    ("change", "needles"),
    [
        # coverage, staleness, provenance: what the candidate's rows and goldens claim
        pytest.param(
            lambda d: d.update(rows=d["rows"][:4]),
            ("no row for 2 of the 6 golden case(s)", "e, f", "goldens.jsonl"),
            id="without-rows-for-two-golden-cases",
        ),
        pytest.param(
            lambda d: d.update(config_name="search-v2"),
            ("'search-v2'", "evalkit"),
            id="from-another-config",
        ),
        pytest.param(lambda d: d.update(goldens=None), ("fingerprints",), id="no-fingerprints"),
        # the checked metric: missing whole, or from one row
        pytest.param(
            drop_metric("recall@1"),
            ("check 'floor'", "'recall@1'", "candidate"),
            id="lacking-a-checked-metric",
        ),
        pytest.param(
            lambda d: d["rows"][2]["metrics"].pop("recall@1"),
            ("check 'floor'", "'recall@1'", "1 case(s)", ": c;"),
            id="a-row-missing-a-checked-value",
        ),
        (lambda d: d.update(schema_version=True), ("schema_version", "True")),
        (
            lambda d: d["goldens"]["cases"].update(a=5),
            ("goldens.cases['a']", "fingerprint string"),
        ),
        (_first_row("latency_ms", -5), ("case 'a'", "latency_ms")),
        (_set_metric_field("kind", "aggregate"), ("'ndcg@10'", "kind 'aggregate'", "re-run")),
        (_set_metric_field("fingerprint", "0000"), ("'ndcg@10'", "another definition")),
    ],
)
def test_a_doctored_candidate_is_refused_with_what_is_wrong(
    project: Path, change: Callable[[dict[str, Any]], None], needles: tuple[str, ...]
) -> None:
    derive(project, "cand.json", change)
    refused(project, "gate", "--candidate", "cand.json", needles=("cand.json", *needles))


def test_a_malformed_metric_in_the_config_is_reported_at_its_line(project: Path) -> None:
    (project / "evalkit.yaml").write_text(
        CONFIG.replace("[recall@1, ndcg@10]", "\n  - recall@1\n  - ndcg@10\n  - ndcg@0")
    )
    result = evalkit("gate", "--candidate", "full.json", cwd=project)
    one_line_error(result, 2, "evalkit.yaml:6:", "ndcg@0")


def test_a_check_on_a_metric_the_config_lacks_names_the_check_line(project: Path) -> None:
    (project / "evalkit.yaml").write_text(CONFIG.replace("[recall@1, ndcg@10]", "[recall@1]"))
    result = evalkit("gate", "--candidate", "full.json", cwd=project)
    one_line_error(result, 2, "checks.yaml:6:", "no_regression", "'ndcg@10'", "evalkit.yaml")


LATENCY_CHECKS = """\
checks:
  - id: fast
    metric: latency_p95
    op: "<="
    threshold: 100
"""


def test_an_answered_case_without_latency_is_not_zero_ms(project: Path) -> None:
    (project / "checks.yaml").write_text(LATENCY_CHECKS)
    (project / "evalkit.yaml").write_text(
        CONFIG.replace("[recall@1, ndcg@10]", "[recall@1, ndcg@10, latency_p95]")
    )

    def unmeasured(doc: dict[str, Any]) -> None:
        for row in doc["rows"]:
            row["latency_ms"] = None

    derive(project, "cand.json", unmeasured)
    refused(project, "gate", "--candidate", "cand.json", needles=("cand.json", "latency_ms"))


def test_latency_of_retrieval_rows_that_never_measured_it_is_refused() -> None:
    from evalkit._model.results import QueryResult, RunResult
    from evalkit.errors import MetricError

    rows = [QueryResult("q1", ["d1"], {}, latency_ms=None), QueryResult("q2", ["d2"], {}, 3.0)]
    with pytest.raises(MetricError, match=r"latency_p95: 1 case\(s\) have no recorded latency"):
        RunResult("trec", rows).aggregate("latency_p95")
    assert RunResult("trec", rows[1:]).aggregate("latency_p95") == 3.0


def test_no_command_names_what_is_missing(tmp_path: Path) -> None:
    result = evalkit(cwd=tmp_path)
    one_line_error(result, 2, "no command given", "evalkit --help")


# ----------------------------------------------- rows held to what the artefact claims (#48)
# A value outside its metric's declared range, or a row for a case the artefact's own
# goldens.cases lacks, cannot come from evalkit: refused, naming file, row, metric, value.


def set_value(case: str, metric: str, value: float) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        for row in doc["rows"]:
            if row["id"] == case:
                row["metrics"][metric] = value

    return change


def test_the_untouched_artefact_gates_against_itself_as_a_baseline(project: Path) -> None:
    (project / "base.json").write_bytes((project / "full.json").read_bytes())
    result = evalkit("gate", "--candidate", "full.json", "--baseline", "base.json", cwd=project)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(("metric", "value"), [("recall@1", 1.7), ("ndcg@10", -0.25)])
def test_a_baseline_value_outside_its_metric_range_is_refused(
    project: Path, metric: str, value: float
) -> None:
    derive(project, "base.json", set_value("b", metric, value))
    result = evalkit("gate", "--candidate", "full.json", "--baseline", "base.json", cwd=project)
    one_line_error(result, 2, "base.json", "'b'", metric, str(value), "[0, 1]")
    assert "0.9500" not in result.stdout


def test_a_candidate_value_outside_its_metric_range_is_refused(project: Path) -> None:
    derive(project, "cand.json", set_value("c", "recall@1", 1.7))
    result = evalkit("gate", "--candidate", "cand.json", cwd=project)
    one_line_error(result, 2, "cand.json", "'c'", "recall@1", "1.7")


def test_show_refuses_the_same_row(project: Path) -> None:
    derive(project, "base.json", set_value("a", "recall@1", 1.7))
    one_line_error(evalkit("show", "base.json", cwd=project), 2, "base.json", "'a'", "1.7")


def test_a_row_absent_from_the_artefacts_own_goldens_is_refused(project: Path) -> None:
    def smuggle(doc: dict[str, Any]) -> None:
        doc["rows"].append({**doc["rows"][0], "id": "zz"})

    derive(project, "base.json", smuggle)
    result = evalkit("gate", "--candidate", "full.json", "--baseline", "base.json", cwd=project)
    one_line_error(result, 2, "base.json", "'zz'", "goldens")


def test_a_value_on_the_range_edge_is_kept(project: Path) -> None:
    derive(project, "base.json", set_value("b", "ndcg@10", 0.0))
    result = evalkit("gate", "--candidate", "full.json", "--baseline", "base.json", cwd=project)
    assert result.returncode in (0, 1), result.stderr


def test_the_error_line_points_at_the_rows_line(project: Path) -> None:
    derive(project, "cand.json", set_value("c", "recall@1", 1.7))
    # rewritten the way evalkit writes files, so the row has a line of its own
    from evalkit._spec.artifact import encode_json_lines

    doc = json.loads((project / "cand.json").read_text())
    (project / "cand.json").write_text(encode_json_lines(doc, "rows"))
    line = next(
        n
        for n, text in enumerate((project / "cand.json").read_text().splitlines(), 1)
        if text.strip().startswith('["c"')
    )
    result = evalkit("gate", "--candidate", "cand.json", cwd=project)
    one_line_error(result, 2, f"cand.json:{line}:")
