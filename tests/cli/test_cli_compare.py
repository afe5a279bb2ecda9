"""``evalkit compare`` of two and of many runs, as a subprocess, on runs of known effect.

Four systems answer the same 40 cases; each case's one relevant id is ``r<i>``:

* ``base`` ranks it second everywhere;
* ``better-reranker-with-a-long-name`` ranks it first on 30 cases (second on the rest);
* ``worse`` ranks it third on 30 cases, so nDCG drops there and recall@1 stays 0;
* ``same`` answers exactly as ``base`` does.

So the truth is known by construction: better is better on both metrics, worse is
worse on nDCG and unchanged on recall@1, same is unchanged on both.
"""

from __future__ import annotations

import csv
import io
import math
from collections import Counter
from pathlib import Path

import pytest

from evalkit.report.compare_tables import CSV_COLUMNS
from helpers.cli import evalkit, write_files
from helpers.tiny_project import one_line_error

LONG = "better-reranker-with-a-long-name"
N = 40

TARGET = f'''
from evalkit import CallableTarget

NAMES = {{"better": "{LONG}"}}


def make_target(variant: str = "base"):
    def rank(case):
        i = int(case.id[1:])
        hit = "r" + str(i)
        if variant == "flaky" and i == 0:
            raise RuntimeError("backend down")
        if variant == "better" and i < 30:
            return [hit, "x"]
        if variant == "worse" and i < 30:
            return ["x", "y", hit]
        return ["x", hit]

    return CallableTarget(rank, name=NAMES.get(variant, variant))
'''

GOLDENS = "".join(
    f'{{"id": "c{i:02d}", "query": "question {i}", "relevant": ["r{i}"]}}\n' for i in range(N)
)

CHECKS = """\
checks:
  - id: floor
    metric: ndcg@10
    op: ">="
    threshold: 0.0
"""


def config(variant: str) -> str:
    return (
        "goldens: goldens.jsonl\nchecks: checks.yaml\nmetrics: [recall@1, ndcg@10]\n"
        f'target:\n  python: "systems:make_target"\n  args: {{variant: {variant}}}\n'
    )


VARIANTS = ("base", "better", "worse", "same", "flaky")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("compare")
    files = {"systems.py": TARGET, "goldens.jsonl": GOLDENS, "checks.yaml": CHECKS}
    files |= {f"evalkit-{v}.yaml": config(v) for v in VARIANTS}
    files["evalkit.yaml"] = config("base")
    write_files(root, files)
    for variant in VARIANTS:
        out = f"{variant}.json"
        extra = ("--allow-failed",) if variant == "flaky" else ()
        result = evalkit("run", "-c", f"evalkit-{variant}.yaml", "--out", out, *extra, cwd=root)
        assert (root / out).exists(), result.stderr
    # a second run of the base config: the same run name as base.json
    assert evalkit("run", "--out", "base2.json", cwd=root).returncode == 0
    return root


def compare(root: Path, *args: str) -> str:
    result = evalkit("compare", *args, cwd=root)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return result.stdout


def table_rows(text: str) -> list[list[str]]:
    """The rows under the header's dashed rule, split on runs of two spaces."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if set(line) == {"-"}) + 1
    rows = []
    for line in lines[start:]:
        if not line.strip():
            break
        rows.append([cell.strip() for cell in line.split("  ") if cell.strip()])
    return rows


def records(root: Path, *args: str) -> list[dict[str, str]]:
    text = compare(root, *args, "--format", "csv")
    reader = csv.DictReader(io.StringIO(text))
    assert tuple(reader.fieldnames or ()) == CSV_COLUMNS
    return list(reader)


# ------------------------------------------------------------------------- many runs


def test_many_runs_against_the_reference_say_better_worse_and_no_change(runs: Path) -> None:
    out = compare(runs, "better.json", "worse.json", "same.json", "base.json")
    title = out.splitlines()[0]
    assert title == (
        f"comparing {LONG}, worse, same against the reference base, paired on {N} cases "
        "(delta = run - base)"
    )
    header = next(line for line in out.splitlines() if line.startswith("metric"))
    assert header.split() == [
        "metric",
        "run",
        "value",
        "delta",
        "CI",
        "level",
        "p",
        "(holm)",
        "W/L/T",
        "direction",
    ]
    rows = table_rows(out)
    # per metric: the compared runs in the order given, then the reference
    runs_shown = [r[1] if r[0] in ("recall@1", "ndcg@10") else r[0] for r in rows]
    assert runs_shown == [LONG, "worse", "same", "base"] * 2
    directions = {(metric, r[1 if r[0] == metric else 0]): r[-1] for metric, r in _by_metric(rows)}
    assert directions == {
        ("recall@1", LONG): "better",
        ("recall@1", "worse"): "no detectable change",
        ("recall@1", "same"): "no detectable change",
        ("recall@1", "base"): "reference",
        ("ndcg@10", LONG): "better",
        ("ndcg@10", "worse"): "worse",
        ("ndcg@10", "same"): "no detectable change",
        ("ndcg@10", "base"): "reference",
    }
    assert "holm-adjusted across the 3 comparisons of each metric" in " ".join(out.split())


def _by_metric(rows: list[list[str]]) -> list[tuple[str, list[str]]]:
    out, metric = [], ""
    for row in rows:
        if row[0] in ("recall@1", "ndcg@10"):
            metric = row[0]
        out.append((metric, row))
    return out


def test_the_reference_is_chosen_by_name_anywhere_or_added(runs: Path) -> None:
    first = records(runs, "base.json", "better.json", "worse.json", "--reference", "base.json")
    last = records(runs, "better.json", "worse.json", "base.json")
    added = records(runs, "better.json", "worse.json", "-r", "base.json")
    assert first == last == added
    assert [(r["metric"], r["run"]) for r in first] == [
        ("recall@1", LONG),
        ("recall@1", "worse"),
        ("ndcg@10", LONG),
        ("ndcg@10", "worse"),
    ]
    assert {r["reference"] for r in first} == {"base"}


def test_csv_is_the_table_at_full_precision_and_decided_equals_printed(runs: Path) -> None:
    rows = records(runs, "better.json", "worse.json", "same.json", "base.json")
    assert len(rows) == 2 * 3
    for metric in ("recall@1", "ndcg@10"):
        family = [r for r in rows if r["metric"] == metric]
        raw = [float(r["p_value"]) for r in family]
        assert [float(r["p_adjusted"]) for r in family] == pytest.approx(holm_by_hand(raw))
        for r in family:
            assert r["correction"] == "holm"
            low, high, p_adj = float(r["ci_low"]), float(r["ci_high"]), float(r["p_adjusted"])
            excludes = low > 0 or high < 0
            # the decision, the adjusted p and the interval say one thing
            assert excludes == (p_adj <= 0.05) == (r["direction"] != "no detectable change")
            assert float(r["confidence"]) >= 0.95
            assert float(r["value"]) - float(r["reference_value"]) == pytest.approx(
                float(r["delta"]), abs=1e-12
            )
            assert int(r["wins"]) + int(r["losses"]) + int(r["ties"]) == int(r["n"]) == N
    better = next(r for r in rows if r["run"] == LONG and r["metric"] == "recall@1")
    assert (better["wins"], better["losses"], better["ties"]) == ("30", "0", "10")
    assert float(better["delta"]) == 0.75  # 30 of 40 cases went from 0 to 1, exactly
    assert better["run_file"] == "better.json"
    assert better["reference_file"] == "base.json"


def holm_by_hand(p: list[float]) -> list[float]:
    """Holm's adjusted p by its definition: max over the steps up to j of (k - i)·p_(i)."""
    k = len(p)
    order = sorted(range(k), key=lambda i: p[i])
    adjusted = [0.0] * k
    running = 0.0
    for step, i in enumerate(order):
        running = max(running, min(1.0, (k - step) * p[i]))
        adjusted[i] = running
    return adjusted


def test_without_a_correction_the_p_is_the_unadjusted_one(runs: Path) -> None:
    rows = records(runs, "better.json", "worse.json", "base.json", "--correction", "none")
    assert all(r["p_adjusted"] == "" and r["correction"] == "none" for r in rows)
    assert all(float(r["confidence"]) == 0.95 for r in rows)
    out = compare(runs, "better.json", "worse.json", "base.json", "--correction", "none")
    assert "95% CI" in out
    assert "level" not in out
    assert "holm" not in out


def test_markdown_is_a_github_table_with_the_same_rows(runs: Path) -> None:
    out = compare(runs, "better.json", "worse.json", "base.json", "--format", "markdown")
    lines = out.splitlines()
    assert lines[0].startswith("**comparing ")
    assert lines[0].endswith("**")
    table = [line for line in lines if line.startswith("| ")]
    assert table[0].startswith("| metric | run | value | delta | CI | level | p (holm) |")
    assert set(table[1].replace("|", "").split()) <= {"---", "---:"}
    body = table[2:]
    assert len(body) == 2 * 3  # two metrics x (two runs + the reference)
    assert all(line.count(" | ") == table[0].count(" | ") for line in body)
    assert sum(line.endswith("| better |") for line in body) == 2
    assert sum(line.endswith("| worse |") for line in body) == 1
    # untrusted text is inert: "@" cannot mention anyone
    assert "ndcg@&#8288;10" in out


def test_runs_sharing_a_name_are_labelled_by_their_files(runs: Path) -> None:
    out = compare(runs, "base.json", "better.json", "base2.json")
    assert out.splitlines()[0].startswith(
        f"comparing base.json, {LONG} against the reference base2.json"
    )


def test_cases_that_failed_in_one_run_are_left_out_of_every_comparison(runs: Path) -> None:
    out = compare(runs, "better.json", "flaky.json", "base.json")
    assert f"paired on {N - 1} cases" in out.splitlines()[0]
    notes = " ".join(out.split())
    assert "1 of the reference's 40 case(s) left out (1 failed in some run): c00" in notes
    rows = records(runs, "better.json", "flaky.json", "base.json")
    assert {r["n"] for r in rows} == {str(N - 1)}


# ------------------------------------------------------------------ narrow terminals

NARROW = [("better.json", "base.json"), ("better.json", "worse.json", "flaky.json", "base.json")]


def _figures(tokens: list[str]) -> Counter[str]:
    """Every token that holds a digit (values, deltas, interval ends, p, W/L/T, levels,
    metric names), with how often it occurs; the ``95%`` of a ``95% CI`` header is left
    out, and ``p<0.0001`` counts as ``<0.0001``."""
    split = " ".join(tokens).replace("<", " <").split()
    return Counter(t.rstrip(":") for t in split if any(c.isdigit() for c in t) and t != "95%")


@pytest.mark.parametrize("width", [50, 80, 100])
@pytest.mark.parametrize("args", NARROW, ids=["two", "many"])
def test_a_narrow_terminal_gets_every_figure_whole_within_its_width(
    runs: Path, width: int, args: tuple[str, ...]
) -> None:
    wide = compare(runs, *args)
    result = evalkit("compare", *args, cwd=runs, env={"COLUMNS": str(width)})
    assert result.returncode == 0, result.stderr
    narrow = result.stdout.splitlines()
    too_long = [line for line in narrow if len(line) > width]
    # only a single unbreakable word may overflow (none of these labels is that long)
    assert too_long == [], too_long
    # the words above the table (title, files) come first in both, wrapped or not
    wide_lines = wide.splitlines()
    rule = next(i for i, line in enumerate(wide_lines) if set(line) == {"-"})
    heading = " ".join(wide_lines[: rule - 1]).split()
    body = narrow[: narrow.index("")] if "" in narrow else narrow
    words = " ".join(body).split()
    assert words[: len(heading)] == heading
    blocks = [line for line in body if line.startswith(" ") or ": " in line]
    table = [" ".join(row) for row in table_rows(wide)]
    assert _figures(words[len(heading) :]) == _figures(" ".join(table).split()), result.stdout
    # each verdict word is said as often as the table says it
    for word in ("better", "worse", "no detectable change", "reference"):
        in_table = sum(row.endswith(word) for row in table)
        assert sum(line.endswith(f": {word}") for line in blocks) == in_table, word


def test_a_table_that_fits_stays_a_table(runs: Path) -> None:
    result = evalkit("compare", "worse.json", "base.json", cwd=runs, env={"COLUMNS": "120"})
    assert result.stdout == compare(runs, "worse.json", "base.json")
    assert any(set(line) == {"-"} for line in result.stdout.splitlines())


def test_a_pipe_without_columns_gets_the_whole_table_for_grep(runs: Path) -> None:
    """No COLUMNS and stdout not a terminal (a CI log, ``| grep``): one line per row."""
    result = evalkit("compare", *NARROW[1], cwd=runs, env={"COLUMNS": None})
    assert result.returncode == 0, result.stderr
    assert table_rows(result.stdout) == table_rows(compare(runs, *NARROW[1]))
    assert max(len(line) for line in result.stdout.splitlines()) > 80


# ------------------------------------------------------------------------- two runs


def test_two_runs_keep_one_row_per_metric_with_columns_in_the_title_order(runs: Path) -> None:
    out = compare(runs, "better.json", "base.json", "--n-resamples", "200")
    lines = out.splitlines()
    assert lines[0] == f"comparing {LONG} against base, paired on {N} cases"
    header = next(line for line in lines if line.startswith("metric"))
    assert header.split()[:4] == ["metric", LONG, "base", "delta"]
    rows = {r[0]: r for r in table_rows(out)}
    assert list(rows) == ["recall@1", "ndcg@10"]
    assert rows["recall@1"][1:4] == ["0.7500", "0.0000", "+0.7500"]
    assert rows["recall@1"][-1] == "better"
    assert rows["recall@1"][-2] == "30/0/10"
    swapped = {r[0]: r for r in table_rows(compare(runs, "base.json", "better.json"))}
    assert swapped["recall@1"][1:4] == ["0.0000", "0.7500", "-0.7500"]
    assert swapped["recall@1"][-1] == "worse"
    assert swapped["recall@1"][-2] == "0/30/10"


@pytest.mark.parametrize(("a", "b"), [("better", "worse"), ("same", "base"), ("worse", "base")])
def test_swapping_two_runs_mirrors_every_number(runs: Path, a: str, b: str) -> None:
    forward = records(runs, f"{a}.json", f"{b}.json")
    backward = records(runs, f"{b}.json", f"{a}.json")
    for f, r in zip(forward, backward, strict=True):
        assert f["metric"] == r["metric"]
        assert float(f["delta"]) == -float(r["delta"])
        assert float(f["ci_low"]) == pytest.approx(-float(r["ci_high"]), abs=1e-12)
        assert float(f["p_value"]) == pytest.approx(float(r["p_value"]), abs=1e-12)
        assert (f["wins"], f["losses"], f["ties"]) == (r["losses"], r["wins"], r["ties"])
        mirror = {"better": "worse", "worse": "better"}
        assert mirror.get(f["direction"], f["direction"]) == r["direction"]


def test_two_run_csv_matches_the_library_rows(runs: Path) -> None:
    from evalkit._spec.artifact import read_artifact
    from evalkit.gate.compare import compare_artifacts

    rows = records(runs, "worse.json", "base.json")
    lib = compare_artifacts(read_artifact(runs / "worse.json"), read_artifact(runs / "base.json"))
    assert [r["metric"] for r in rows] == [r.metric for r in lib]
    for printed, row in zip(rows, lib, strict=True):
        assert float(printed["delta"]) == row.delta
        assert float(printed["p_value"]) == row.p_value
        assert math.isclose(float(printed["ci_low"]), row.ci_low)
        assert printed["direction"] == row.direction


def test_alpha_sets_the_level_of_every_verdict_and_interval(runs: Path) -> None:
    rows = records(runs, "worse.json", "same.json", "base.json", "--alpha", "0.2")
    for r in rows:
        assert r["correction"] == "holm"
        # each row's own level is Holm's 1 - 0.2/j, never below 1 - alpha
        assert 0.8 <= float(r["confidence"]) < 0.95 + 1e-12
        detected = r["direction"] != "no detectable change"
        assert detected == (float(r["p_adjusted"]) <= 0.2)
    uncorrected = compare(
        runs, "worse.json", "same.json", "base.json", "--alpha", "0.025", "--correction", "none"
    )
    header = next(line for line in uncorrected.splitlines() if line.startswith("metric"))
    assert "97.5% CI" in header  # not rounded to "98%"
    pair = compare(runs, "worse.json", "base.json", "--alpha", "0.1")
    header = next(line for line in pair.splitlines() if line.startswith("metric"))
    assert "90% CI" in header
    assert all(
        float(r["confidence"]) == 0.9
        for r in records(runs, "worse.json", "base.json", "--alpha", "0.1")
    )
    default = compare(runs, "worse.json", "base.json")
    assert "95% CI" in next(line for line in default.splitlines() if line.startswith("metric"))


def test_alpha_reaches_the_html_report(runs: Path, tmp_path: Path) -> None:
    page = tmp_path / "compare.html"
    compare(runs, "worse.json", "base.json", "--alpha", "0.1", "--html", str(page))
    text = page.read_text(encoding="utf-8")
    assert "<th>90% CI</th>" in text
    assert "95% CI" not in text


# ------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (("base.json",), ("two runs or more", "--reference")),
        (("base.json", "better.json", "base.json", "worse.json"), ("given twice",)),
        (("better.json", "base.json", "--correction", "maxt"), ("maxt", "holm")),
        (("better.json", "base.json", "--correction", "bonferoni"), ("unknown correction",)),
        (("better.json", "base.json", "--format", "markdwon"), ("did you mean 'markdown'?",)),
        (("better.json", "worse.json", "base.json", "--html", "c.html"), ("--html", "two runs")),
        (("base.json", "-r", "base.json"), ("nothing to compare",)),
        (("better.json", "base.json", "--alpha", "0"), ("--alpha must lie strictly between",)),
        (("better.json", "base.json", "--alpha", "1"), ("between 0 and 1, got 1",)),
        (("better.json", "base.json", "--alpha", "1.5"), ("between 0 and 1, got 1.5",)),
        (("better.json", "base.json", "--alpha", "-0.1"), ("between 0 and 1, got -0.1",)),
        (("better.json", "base.json", "--alpha", "nan"), ("between 0 and 1, got nan",)),
        (("missing.json", "base.json", "--alpha", "2"), ("--alpha must lie strictly between",)),
    ],
)
def test_bad_requests_are_one_line_and_exit_two(
    runs: Path, args: tuple[str, ...], needles: tuple[str, ...]
) -> None:
    one_line_error(evalkit("compare", *args, cwd=runs), 2, *needles)
    assert not (runs / "c.html").exists()
