"""Per-query equality with trec_eval (pytrec_eval 0.5.x, trec_eval 9.0.8) to 1e-9.

Every evalkit path is held to the reference on generated data: the per-query
formulas of ``metrics.core``, the vectorised ``score_rankings``, and TREC files
read and scored by ``score_trec_run``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalkit._spec.trec import score_trec_run, write_qrels
from evalkit.metrics.batch import score_rankings
from evalkit.metrics.core import (
    hit_rate_at_k,
    map_at_k,
    mrr_at_k,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
)
from ir_reference import (
    KS,
    Qrels,
    ScoredRun,
    as_scored,
    cut_measures,
    expected,
    generate,
    reference,
    trec_order,
)

CORE: dict[str, Callable[..., float]] = {
    "precision": precision_at_k,
    "recall": recall_at_k,
    "ndcg": ndcg_at_k,
    "mrr": mrr_at_k,
    "map": map_at_k,
    "hit_rate": hit_rate_at_k,
}
SPECS = [f"{family}@{k}" for family in CORE for k in KS]
TOL = 1e-9


def assert_rows_match(
    got: dict[str, dict[str, float]],
    ref: dict[str, dict[str, float]],
    lengths: dict[str, int],
) -> int:
    """Compare every (query, metric) pytrec_eval defines; return how many were compared."""
    assert set(got) == set(ref)
    compared = 0
    for qid, values in ref.items():
        for family in CORE:
            for k in KS:
                want = expected(values, family, k, lengths[qid])
                if want is None:
                    continue
                assert got[qid][f"{family}@{k}"] == pytest.approx(want, abs=TOL), (qid, family, k)
                compared += 1
    return compared


@pytest.mark.parametrize("level", [1, 2, 3])
@pytest.mark.parametrize("seed", range(5))
def test_core_formulas_equal_trec_eval(seed: int, level: int) -> None:
    g = generate(seed)
    ref = reference(g.qrels, g.run, cut_measures(), level)
    # trec_eval scores the queries that are both ranked and judged.
    assert set(ref) == set(g.run) & set(g.qrels)
    got: dict[str, dict[str, float]] = {}
    lengths: dict[str, int] = {}
    for qid in ref:
        ranking = trec_order(g.run[qid])
        lengths[qid] = len(ranking)
        got[qid] = {
            f"{family}@{k}": fn(ranking, g.qrels[qid], k, relevance_level=level)
            for family, fn in CORE.items()
            for k in KS
        }
    assert assert_rows_match(got, ref, lengths) > 1000


@pytest.mark.parametrize("level", [1, 2, 3])
@pytest.mark.parametrize("seed", range(5))
def test_batch_scoring_equals_trec_eval(seed: int, level: int) -> None:
    g = generate(seed)
    ref = reference(g.qrels, g.run, cut_measures(), level)
    rankings = {qid: trec_order(scores) for qid, scores in g.run.items()}
    result = score_rankings("gen", rankings, g.qrels, SPECS, relevance_level=level)
    got = {row.query_id: row.metrics for row in result.per_query}
    assert [row.query_id for row in result.per_query] == [q for q in g.run if q in g.qrels]
    assert assert_rows_match(got, ref, {q: len(r) for q, r in rankings.items()}) > 1000


@pytest.mark.parametrize("seed", range(3))
def test_mrr_at_k_is_recip_rank_of_the_run_cut_at_k(seed: int) -> None:
    g = generate(seed)
    for k in KS:
        cut: ScoredRun = {q: as_scored(trec_order(s)[:k]) for q, s in g.run.items()}
        ref = reference(g.qrels, cut, {"recip_rank"})
        rankings = {q: trec_order(s) for q, s in g.run.items()}
        rows = score_rankings("cut", rankings, g.qrels, [f"mrr@{k}"]).per_query
        for row in rows:
            want = ref[row.query_id]["recip_rank"]
            assert row.metrics[f"mrr@{k}"] == pytest.approx(want, abs=TOL)
            assert mrr_at_k(rankings[row.query_id], g.qrels[row.query_id], k) == pytest.approx(
                want, abs=TOL
            )


def with_repeats(ranking: list[str], rng: random.Random) -> tuple[list[str], list[str]]:
    """Insert repeats of ranked ids; also return the ranking with each repeat replaced
    by a fresh unjudged id (what a repeat is defined to score as)."""
    repeated = list(ranking)
    for _ in range(rng.randint(1, 4)):
        pos = rng.randint(0, len(repeated) - 1)
        repeated.insert(rng.randint(pos + 1, len(repeated)), repeated[pos])
    seen: set[str] = set()
    placeholder: list[str] = []
    for i, doc in enumerate(repeated):
        placeholder.append(doc if doc not in seen else f"repeat-slot-{i}")
        seen.add(doc)
    return repeated, placeholder


@pytest.mark.parametrize("seed", range(4))
def test_a_repeated_id_scores_as_an_unjudged_slot(seed: int) -> None:
    g = generate(seed)
    rng = random.Random(seed)
    rankings: dict[str, list[str]] = {}
    placeholder_run: ScoredRun = {}
    for qid, scores in g.run.items():
        ranking = trec_order(scores)
        if ranking:
            ranking, placeholder = with_repeats(ranking, rng)
        else:
            placeholder = []
        rankings[qid] = ranking
        placeholder_run[qid] = as_scored(placeholder)
    assert any(len(set(r)) < len(r) for r in rankings.values())
    ref = reference(g.qrels, placeholder_run, cut_measures())
    lengths = {q: len(r) for q, r in rankings.items()}
    batch = score_rankings("dups", rankings, g.qrels, SPECS).per_query
    assert_rows_match({r.query_id: r.metrics for r in batch}, ref, lengths)
    core = {
        qid: {
            f"{family}@{k}": fn(rankings[qid], g.qrels[qid], k)
            for family, fn in CORE.items()
            for k in KS
        }
        for qid in ref
    }
    assert_rows_match(core, ref, lengths)


@pytest.mark.parametrize("seed", range(3))
def test_sets_are_grade_one_and_match_binary_trec_eval(seed: int) -> None:
    g = generate(seed)
    sets = {q: {d for d, grade in j.items() if grade >= 1} for q, j in g.qrels.items()}
    binary: Qrels = {q: dict.fromkeys(s, 1) for q, s in sets.items() if s}
    ref = reference(binary, g.run, cut_measures())
    rankings = {q: trec_order(s) for q, s in g.run.items()}
    result = score_rankings("sets", rankings, sets, SPECS)
    got = {r.query_id: r.metrics for r in result.per_query}
    # pytrec_eval drops a query whose judgments are empty; evalkit scores it, as zeros.
    empty = {q for q in got if not sets[q]}
    assert empty
    assert all(v == 0.0 for q in empty for v in got[q].values())
    assert_rows_match(
        {q: m for q, m in got.items() if q not in empty},
        ref,
        {q: len(r) for q, r in rankings.items()},
    )


def write_run_file(path: Path, run: ScoredRun, rng: random.Random, *, shuffle: bool) -> None:
    """A run file as systems write them: trec_eval ignores line order and rank.

    ``shuffle`` mixes every line; otherwise each query is written by falling
    score, with tied documents in random order (what most systems emit).
    """
    lines: list[str] = []
    for qid, scores in run.items():
        docs = list(scores)
        rng.shuffle(docs)
        if not shuffle:
            docs.sort(key=scores.__getitem__, reverse=True)  # stable: ties stay random
        lines += [
            f"{qid}\tQ0 {d}  {rng.randint(1, 99)} {scores[d]!r} tag{rng.randint(0, 2)}\n"
            for d in docs
        ]
    if shuffle:
        rng.shuffle(lines)
    lines.insert(rng.randint(0, len(lines)), "# a comment line\n")
    lines.insert(rng.randint(0, len(lines)), "\n")
    opener = __import__("gzip").open if path.name.endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as fh:
        fh.write("".join(lines))


@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("suffix", ["", ".gz"])
@pytest.mark.parametrize("seed", range(3))
def test_trec_files_score_like_trec_eval(
    tmp_path: Path, seed: int, suffix: str, shuffle: bool
) -> None:
    g = generate(seed, n_queries=60)
    rng = random.Random(seed)
    run_path = tmp_path / f"run.txt{suffix}"
    qrels_path = tmp_path / f"qrels.txt{suffix}"
    write_run_file(run_path, g.run, rng, shuffle=shuffle)
    write_qrels(qrels_path, g.qrels)
    specs = [s for s in SPECS if not s.startswith("mrr")] + ["mrr@1000"]
    for level in (1, 2):
        ref = reference(g.qrels, g.run, cut_measures() | {"recip_rank"}, level)
        result = score_trec_run(run_path, qrels_path, specs, relevance_level=level)
        got = {row.query_id: row.metrics for row in result.per_query}
        assert set(got) == set(ref) - {q for q in ref if not g.run[q]}  # files hold no empty run
        for qid, values in got.items():
            assert values["mrr@1000"] == pytest.approx(ref[qid]["recip_rank"], abs=TOL)
            for spec in specs[:-1]:
                family, k = spec.split("@")
                want = expected(ref[qid], family, int(k), 0)
                assert values[spec] == pytest.approx(want, abs=TOL), (qid, spec)


def near_tie_run(seed: int) -> ScoredRun:
    """Scores closer than float32 precision: float32 ties them, float64 does not."""
    rng = random.Random(seed)
    run: ScoredRun = {}
    for q in range(30):
        base = rng.choice([1.0, 3.5, 1000.25])
        docs = [f"d{i}" for i in range(8)]
        run[f"q{q}"] = {d: base * (1 + rng.randint(-3, 3) * 1e-10) for d in docs}
    return run


@pytest.mark.parametrize("shuffle", [True, False])
def test_float32_scores_reproduce_pytrec_eval_and_float64_keeps_the_doubles(
    tmp_path: Path, shuffle: bool
) -> None:
    run = near_tie_run(7)
    rng = random.Random(7)
    qrels: Qrels = {q: {f"d{i}": rng.randint(0, 2) for i in range(8)} for q in run}
    run_path = tmp_path / "run.txt"
    write_run_file(run_path, run, rng, shuffle=shuffle)
    qrels_path = write_qrels(tmp_path / "qrels.txt", qrels)
    specs = ["ndcg@3", "mrr@100", "precision@2"]

    float32 = score_trec_run(run_path, qrels_path, specs, score_dtype="float32")
    ref32 = reference(qrels, run, {"ndcg_cut.3", "recip_rank", "P.2"})
    for row in float32.per_query:
        assert row.metrics["ndcg@3"] == pytest.approx(ref32[row.query_id]["ndcg_cut_3"], abs=TOL)
        assert row.metrics["mrr@100"] == pytest.approx(ref32[row.query_id]["recip_rank"], abs=TOL)
        assert row.metrics["precision@2"] == pytest.approx(ref32[row.query_id]["P_2"], abs=TOL)

    # float64 (trec_eval 10.0) ranks by the exact doubles, ties by doc id descending.
    double_order: ScoredRun = {q: as_scored(trec_order(s)) for q, s in run.items()}
    ref64 = reference(qrels, double_order, {"ndcg_cut.3", "recip_rank", "P.2"})
    float64 = score_trec_run(run_path, qrels_path, specs)
    for row in float64.per_query:
        assert row.retrieved == trec_order(run[row.query_id])
        assert row.metrics["ndcg@3"] == pytest.approx(ref64[row.query_id]["ndcg_cut_3"], abs=TOL)
        assert row.metrics["mrr@100"] == pytest.approx(ref64[row.query_id]["recip_rank"], abs=TOL)
    rankings32 = {row.query_id: row.retrieved for row in float32.per_query}
    differs = sum(row.retrieved != rankings32[row.query_id] for row in float64.per_query)
    assert differs > 5  # the two orderings really differ on this data


_ids = st.sampled_from(["a", "b", "c", "d", "e", "B", "aa", "é"])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ranking=st.lists(_ids, max_size=10),
    # (trec_eval 9.0.8 crashes when every grade is below -1: tested apart)
    judged=st.dictionaries(_ids, st.integers(-2, 4), min_size=1, max_size=6).filter(
        lambda j: max(j.values()) >= -1
    ),
    k=st.integers(1, 12),
    level=st.integers(1, 3),
)
def test_random_small_cases_agree_everywhere(
    ranking: list[str], judged: dict[str, int], k: int, level: int
) -> None:
    unique = list(dict.fromkeys(ranking))
    placeholder = [d if d not in ranking[:i] else f"slot{i}" for i, d in enumerate(ranking)]
    ref = reference({"q": judged}, {"q": as_scored(placeholder)}, cut_measures([k]), level)["q"]
    batch = score_rankings(
        "h", {"q": ranking}, {"q": judged}, [f"{f}@{k}" for f in CORE], relevance_level=level
    )
    for family, fn in CORE.items():
        want = expected(ref, family, k, len(ranking))
        core_value = fn(ranking, judged, k, relevance_level=level)
        batch_value = batch.per_query[0].metrics[f"{family}@{k}"]
        assert core_value == pytest.approx(batch_value, abs=TOL)
        if want is not None:
            assert core_value == pytest.approx(want, abs=TOL), (family, unique)


def test_a_query_judged_only_below_minus_one_scores_zero() -> None:
    # trec_eval 9.0.8 crashes on such a query (memset with a negative size); by the
    # definitions nothing is relevant and no gain is positive, so every value is 0.
    rows = score_rankings("neg", {"q": ["a", "b"]}, {"q": {"a": -2, "z": -5}}, SPECS).per_query
    assert all(value == 0.0 for value in rows[0].metrics.values())
    assert all(fn(["a", "b"], {"a": -2}, 3) == 0.0 for fn in CORE.values())


@pytest.mark.parametrize("seed", range(2))
def test_map_at_a_cutoff_beyond_every_ranking_is_trec_eval_map(seed: int) -> None:
    g = generate(seed)
    ref = reference(g.qrels, g.run, {"map"})
    rankings = {q: trec_order(s) for q, s in g.run.items()}
    for row in score_rankings("m", rankings, g.qrels, ["map@1000"]).per_query:
        assert row.metrics["map@1000"] == pytest.approx(ref[row.query_id]["map"], abs=TOL)


@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("seed", range(4))
def test_trec_eval_full_depth_names_equal_its_uncut_measures(seed: int, level: int) -> None:
    # map, ndcg and recip_rank (mrr its alias) are trec_eval's measures over the whole
    # ranking, which can be longer than any cutoff a user would pick.
    g = generate(seed)
    ref = reference(g.qrels, g.run, {"map", "ndcg", "recip_rank"}, level)
    rankings = {q: trec_order(s) for q, s in g.run.items()}
    names = ["map", "ndcg", "recip_rank", "mrr"]
    result = score_rankings("full", rankings, g.qrels, names, relevance_level=level)
    assert {row.query_id for row in result.per_query} == set(ref)
    for row in result.per_query:
        want = ref[row.query_id]
        assert row.metrics["map"] == pytest.approx(want["map"], abs=TOL), row.query_id
        assert row.metrics["ndcg"] == pytest.approx(want["ndcg"], abs=TOL), row.query_id
        assert row.metrics["recip_rank"] == pytest.approx(want["recip_rank"], abs=TOL)
        assert row.metrics["mrr"] == row.metrics["recip_rank"]
