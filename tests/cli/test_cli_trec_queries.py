"""`evalkit run --trec-run`: which queries are scored, said out loud, and trec_eval's names.

trec_eval scores the queries both files hold; with ``-c`` every judged query, an
unranked one as an empty ranking.  ``--queries qrels`` is that choice; either way the
judged queries left out (or zeroed) and the ranked ones nobody judged are named on
stderr.  The values are held to pytrec_eval (trec_eval 9.0.8) per query, through the
CLI in process.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit._spec.trec import write_qrels, write_run
from evalkit.cli import main
from helpers.artefact_docs import load_artefact
from ir_reference import Qrels, ScoredRun, generate, reference

TOL = 1e-9


def score(
    capsys: pytest.CaptureFixture[str], root: Path, metrics: str, *extra: str
) -> tuple[int, dict[str, dict[str, float]], str]:
    out = root / "scored.json"
    code = main(
        [
            "run",
            *("--trec-run", str(root / "r1.run"), "--qrels", str(root / "qrels.txt")),
            *("--metrics", metrics, "--out", str(out), *extra),
        ]
    )
    err = capsys.readouterr().err
    rows = load_artefact(out)["rows"] if code == 0 else []
    return code, {row["id"]: row["metrics"] for row in rows}, err


def write(root: Path, run: ScoredRun, qrels: Qrels) -> Path:
    write_run(root / "r1.run", run)
    write_qrels(root / "qrels.txt", qrels)
    return root


SMALL_QRELS: Qrels = {"1": {"a": 1}, "2": {"b": 1, "c": 2}, "3": {"d": 1}}
SMALL_RUN: ScoredRun = {"1": {"a": 2.0, "x": 1.0}, "2": {"c": 1.0}, "stray": {"a": 1.0}}


def test_by_default_an_unranked_judged_query_is_left_out_and_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, rows, err = score(capsys, write(tmp_path, SMALL_RUN, SMALL_QRELS), "recall@10")
    assert code == 0, err
    assert sorted(rows) == ["1", "2"]
    assert err.splitlines() == [
        "evalkit: note: 1 judged query with no ranking in r1.run left out: 3; "
        "--queries qrels scores them as 0 (trec_eval -c)",
        "evalkit: note: 1 ranked query not in the qrels left out: stray",
    ]


def test_queries_qrels_scores_the_unranked_judged_query_as_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write(tmp_path, SMALL_RUN, SMALL_QRELS)
    code, rows, err = score(capsys, root, "recall@10,map", "--queries", "qrels")
    assert code == 0, err
    assert rows["3"] == {"recall@10": 0.0, "map": 0.0}
    assert sorted(rows) == ["1", "2", "3"]
    assert err.splitlines()[0] == (
        "evalkit: note: 1 judged query with no ranking in r1.run scored as an empty "
        "ranking (0, as trec_eval -c): 3"
    )


def test_many_left_out_queries_are_counted_past_the_first_ten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels: Qrels = {f"q{i:02d}": {"a": 1} for i in range(25)}
    root = write(tmp_path, {"q00": {"a": 1.0}}, qrels)
    code, _, err = score(capsys, root, "recall@10")
    assert code == 0, err
    shown = ", ".join(f"q{i:02d}" for i in range(1, 11))
    assert f"24 judged queries with no ranking in r1.run left out: {shown} (+14 more);" in err


def test_queries_run_refuses_a_ranked_query_nobody_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = score(capsys, write(tmp_path, SMALL_RUN, SMALL_QRELS), "map", "--queries=run")
    assert code == 2
    assert "missing from qrels: 'stray'" in err


def test_a_misspelt_queries_value_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write(tmp_path, SMALL_RUN, SMALL_QRELS)
    code, _, err = score(capsys, root, "map", "--queries", "qrel")
    assert code == 2
    assert err == (
        "evalkit: --queries must be both, qrels or run, got 'qrel' (did you mean 'qrels'?)\n"
    )


def test_queries_without_trec_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--queries", "qrels"]) == 2
    assert "--queries goes with --trec-run" in capsys.readouterr().err


# --- the values, against trec_eval -------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_queries_qrels_equals_trec_eval_c_per_query(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], seed: int
) -> None:
    g = generate(seed, n_queries=60)
    root = write(tmp_path, g.run, g.qrels)  # an empty ranking writes no line: unranked
    code, rows, err = score(
        capsys, root, "map,ndcg,recip_rank,ndcg@10,precision@5", "--queries", "qrels"
    )
    assert code == 0, err
    # trec_eval -c: every judged query, one the run does not rank as an empty ranking
    every_judged = {q: g.run.get(q, {}) for q in g.qrels}
    ref = reference(g.qrels, every_judged, {"map", "ndcg", "recip_rank", "ndcg_cut.10", "P.5"})
    assert set(rows) == set(g.qrels)
    unranked = [q for q in g.qrels if not g.run.get(q)]
    assert unranked  # the generator leaves some judged queries unranked
    assert f"{len(unranked)} judged quer" in err
    for qid, values in rows.items():
        want = ref[qid]
        assert values["map"] == pytest.approx(want["map"], abs=TOL), qid
        assert values["ndcg"] == pytest.approx(want["ndcg"], abs=TOL), qid
        assert values["recip_rank"] == pytest.approx(want["recip_rank"], abs=TOL), qid
        assert values["ndcg@10"] == pytest.approx(want["ndcg_cut_10"], abs=TOL), qid
        assert values["precision@5"] == pytest.approx(want["P_5"], abs=TOL), qid


def test_trec_eval_names_through_the_cli_equal_trec_eval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    g = generate(11, n_queries=60)
    root = write(tmp_path, g.run, g.qrels)
    code, rows, err = score(capsys, root, "map,ndcg,recip_rank,mrr", "--relevance-level", "2")
    assert code == 0, err
    ref = reference(g.qrels, g.run, {"map", "ndcg", "recip_rank"}, relevance_level=2)
    assert set(rows) == {q for q in ref if g.run[q]}  # files hold no empty ranking
    for qid, values in rows.items():
        for name, measure in (("map", "map"), ("ndcg", "ndcg"), ("recip_rank", "recip_rank")):
            assert values[name] == pytest.approx(ref[qid][measure], abs=TOL), (qid, name)
        assert values["mrr"] == values["recip_rank"]


def test_a_misspelt_trec_eval_name_gets_a_did_you_mean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = score(capsys, write(tmp_path, SMALL_RUN, SMALL_QRELS), "recip_rnk")
    assert code == 2
    assert "unknown metric 'recip_rnk' (did you mean 'recip_rank'?)" in err
