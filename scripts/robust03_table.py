"""Build tests/data/robust03/per_topic.csv: per-topic values of real TREC 2003 Robust runs.

    uv run python scripts/robust03_table.py RUNS_DIR QRELS [--out tests/data/robust03/per_topic.csv]

RUNS_DIR holds the ``input.*.gz`` runs and QRELS the ``robust03_qrels.txt`` of
trectools' ``examples/robust03`` (github.com/joaopalotti/trectools, BSD-3-Clause).
Every value is computed by evalkit's own TREC scorer (``score_trec_run``, trec_eval
10.0 semantics: float64 scores) and checked, value by value, against pytrec_eval
(trec_eval 9.0.8, float32 scores) on evalkit's float32 ordering; the script stops if
any value differs by more than 1e-9, and prints how many float64 values differ from
the float32 ones (near-tied scores ordered differently).

The calibration run (``scripts/calibration/calibrate.py``, shapes ``trec-*``) draws its
real-data null from this table: the systems are two real runs, each topic's two scores
are given to the two "systems" by a fair coin, so the null is exact by construction.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from evalkit.trec import read_qrels, read_run, score_trec_run

#: evalkit metric -> pytrec_eval measure (runs are at most 1000 deep: map, mrr uncut).
METRICS = {
    "ndcg@10": "ndcg_cut_10",
    "precision@10": "P_10",
    "map@1000": "map_cut_1000",
    "recall@100": "recall_100",
    "mrr@1000": "recip_rank",
}


def _reference(run_path: Path, qrels: dict[str, dict[str, int]]) -> dict[str, dict[str, float]]:
    import pytrec_eval

    run = read_run(run_path)
    # the file's own scores: pytrec_eval orders them itself (float32, ties by doc id)
    scored = {q: dict(run.scored(i)) for i, q in enumerate(run.query_ids)}
    measures = {"ndcg_cut.10", "P.10", "map_cut.1000", "recall.100", "recip_rank"}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures)
    out: dict[str, dict[str, float]] = evaluator.evaluate(scored)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/robust03_table.py")
    parser.add_argument("runs", type=Path)
    parser.add_argument("qrels", type=Path)
    parser.add_argument("--out", type=Path, default=Path("tests/data/robust03/per_topic.csv"))
    args = parser.parse_args(argv)
    runs = sorted(args.runs.glob("input.*.gz"))
    if not runs:
        print(f"error: no input.*.gz runs in {args.runs}", file=sys.stderr)
        return 2
    qrels = read_qrels(args.qrels)
    rows: list[tuple[str, str, str, float]] = []
    order_changes = 0
    worst = 0.0
    for path in runs:
        tag = path.name.removeprefix("input.").removesuffix(".gz")
        exact = score_trec_run(path, args.qrels, list(METRICS), name=tag)
        single = score_trec_run(path, args.qrels, list(METRICS), name=tag, score_dtype="float32")
        reference = _reference(path, qrels)
        for metric, measure in METRICS.items():
            values, values32 = exact.values(metric), single.values(metric)
            for topic in exact.ids():
                value, value32 = values[topic], values32[topic]
                worst = max(worst, abs(float(value32) - reference[topic][measure]))
                order_changes += float(value) != float(value32)
                rows.append((tag, metric, topic, float(value)))
        print(f"  {tag}: {len(exact.ids())} topics", file=sys.stderr)
    if worst > 1e-9:
        print(f"error: evalkit and pytrec_eval differ by {worst:.3g}", file=sys.stderr)
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        # wide: one row per (metric, topic), one column per run (a third of the long form)
        tags = sorted({tag for tag, _, _, _ in rows})
        table = {(metric, topic, tag): value for tag, metric, topic, value in rows}
        writer.writerow(("metric", "topic", *tags))
        for metric in METRICS:
            topics = sorted({t for _, m, t, _ in rows if m == metric}, key=int)
            for topic in topics:
                cells = (f"{table[metric, topic, tag]:.6g}" for tag in tags)
                writer.writerow((metric, topic, *cells))
    print(
        f"wrote {args.out}: {len(runs)} runs, {len(rows)} values; evalkit (float32 order) = "
        f"pytrec_eval to {worst:.1e}; {order_changes} values differ between float64 and "
        "float32 score order",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
