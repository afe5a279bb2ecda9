"""Score a large TREC run with evalkit and with pytrec_eval, in the same process.

    uv run python benchmarks/bench_metrics.py                 # 100,000 queries x 100 docs
    uv run python benchmarks/bench_metrics.py --queries 2000  # a quick look

Generates a seeded run file (scores rounded to 3 decimals, so ties occur and
are broken by doc id) and a graded qrels file (grades -1..3, some judged
documents never retrieved), then times, for each library:

* parsing: reading the run and qrels files into the library's structures
  (``evalkit._spec.trec.read_run``/``read_qrels``; ``pytrec_eval.parse_run``/``parse_qrel``);
* scoring: recall@10, ndcg@10, mrr@100 and map@100 for every query
  (pytrec_eval: recall_10, ndcg_cut_10, recip_rank, map_cut_100, with the
  evaluator's construction included; evalkit: ``score_rankings``, which also
  builds one ``QueryResult`` row per query).

Both libraries' per-query values are compared (they must agree to 1e-9), and
the last line printed is one JSON object: ``evalkit_s``, ``pytrec_eval_s`` and
``ratio`` (parsing included), plus the parts.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np
import pytrec_eval

from evalkit._spec.trec import read_run, score_trec_run
from evalkit._spec.trec_io import read_qrels
from evalkit._spec.trec_run import TrecRun
from evalkit.metrics.batch import score_rankings

METRICS = ("recall@10", "ndcg@10", "mrr@100", "map@100")
TREC_NAMES = {
    "recall@10": "recall_10",
    "ndcg@10": "ndcg_cut_10",
    "mrr@100": "recip_rank",
    "map@100": "map_cut_100",
}
T = TypeVar("T")


def generate(directory: Path, n_queries: int, n_docs: int, seed: int) -> tuple[Path, Path]:
    """Write run.txt and qrels.txt; return their paths."""
    rng = np.random.default_rng(seed)
    run_path, qrels_path = directory / "run.txt", directory / "qrels.txt"
    block = 2000
    with run_path.open("w") as run_fh, qrels_path.open("w") as qrels_fh:
        for start in range(0, n_queries, block):
            stop = min(n_queries, start + block)
            b = stop - start
            # Distinct ids within a row: distinct residues modulo n_docs, shuffled.
            docs = rng.permuted(
                rng.integers(0, 50_000, size=(b, n_docs)) * n_docs + np.arange(n_docs), axis=1
            )
            scores = np.round(np.sort(rng.random((b, n_docs)) * 20.0, axis=1)[:, ::-1], 3)
            judged_pos = np.argsort(rng.random((b, n_docs)), axis=1)[:, :10]
            grades = rng.integers(-1, 4, size=(b, 13))
            run_lines: list[str] = []
            qrels_lines: list[str] = []
            for row in range(b):
                qid = f"q{start + row}"
                ids = [f"D{d}" for d in docs[row].tolist()]
                run_lines.extend(
                    f"{qid} Q0 {d} {r} {s:.3f} bench\n"
                    for r, (d, s) in enumerate(zip(ids, scores[row].tolist(), strict=True), 1)
                )
                judged = [ids[p] for p in judged_pos[row].tolist()] + [
                    f"{qid}-unretrieved-{j}" for j in range(3)
                ]
                qrels_lines.extend(
                    f"{qid} 0 {d} {g}\n" for d, g in zip(judged, grades[row].tolist(), strict=True)
                )
            run_fh.write("".join(run_lines))
            qrels_fh.write("".join(qrels_lines))
    return run_path, qrels_path


def pytrec_score(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]
) -> dict[str, dict[str, float]]:
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(TREC_NAMES.values()))
    return evaluator.evaluate(run)


def timed(label: str, fn: Callable[[], T]) -> tuple[T, float, float]:
    """Run fn once; return its value, wall seconds and CPU seconds of this process."""
    gc.collect()
    cpu = time.process_time()
    started = time.perf_counter()
    value = fn()
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu
    print(f"  {label:<44} {elapsed:7.2f} s wall {cpu:7.2f} s cpu", flush=True)
    return value, elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path, default=None, help="keep the files here")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        directory = args.workdir or Path(tmp)
        directory.mkdir(parents=True, exist_ok=True)
        print(f"generating {args.queries:,} queries x {args.docs} docs in {directory}", flush=True)
        run_path, qrels_path = generate(directory, args.queries, args.docs, args.seed)

        print("pytrec_eval", flush=True)

        def pt_parse() -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
            with qrels_path.open() as q_fh, run_path.open() as r_fh:
                return pytrec_eval.parse_qrel(q_fh), pytrec_eval.parse_run(r_fh)

        (pt_qrels, pt_run), pt_parse_s, pt_parse_cpu = timed("parse run + qrels", pt_parse)

        pt_values, pt_score_s, pt_score_cpu = timed(
            "score 4 metrics", functools.partial(pytrec_score, pt_qrels, pt_run)
        )
        del pt_run, pt_qrels

        print("evalkit", flush=True)
        result, ek_total_s, ek_total_cpu = timed(
            "score_trec_run (parse + score, one pass)",
            lambda: score_trec_run(run_path, qrels_path, METRICS),
        )
        del result

        def ek_parse() -> tuple[TrecRun, dict[str, dict[str, int]]]:
            return read_run(run_path), read_qrels(qrels_path)

        (ek_run, ek_qrels), ek_parse_s, _ = timed("read_run + read_qrels", ek_parse)
        result, ek_score_s, ek_score_cpu = timed(
            "score_rankings (parsed run; + per-query rows)",
            lambda: score_rankings("bench", ek_run, ek_qrels, METRICS),
        )

    worst = 0.0
    for row in result.per_query:
        reference = pt_values[row.query_id]
        for metric, trec_name in TREC_NAMES.items():
            worst = max(worst, abs(row.metrics[metric] - reference[trec_name]))
    if len(result.per_query) != len(pt_values):
        raise SystemExit(f"query counts differ: {len(result.per_query)} vs {len(pt_values)}")
    if worst > 1e-9:
        raise SystemExit(f"evalkit and pytrec_eval disagree: max |diff| = {worst:.3g}")

    pytrec_s = pt_parse_s + pt_score_s
    pytrec_cpu = pt_parse_cpu + pt_score_cpu
    print(f"agreement: max |evalkit - pytrec_eval| over all queries and metrics = {worst:.2g}")
    print(
        f"parsing included: evalkit {ek_total_s:.2f} s, pytrec_eval {pytrec_s:.2f} s "
        f"(ratio {ek_total_s / pytrec_s:.2f}; cpu ratio {ek_total_cpu / pytrec_cpu:.2f})"
    )
    print(
        f"parsing excluded: evalkit {ek_score_s:.2f} s, pytrec_eval {pt_score_s:.2f} s "
        f"(ratio {ek_score_s / pt_score_s:.2f}; cpu ratio {ek_score_cpu / pt_score_cpu:.2f})"
    )
    print(
        json.dumps(
            {
                "evalkit_s": round(ek_total_s, 3),
                "pytrec_eval_s": round(pytrec_s, 3),
                "ratio": round(ek_total_s / pytrec_s, 3),
                "evalkit_cpu_s": round(ek_total_cpu, 3),
                "pytrec_eval_cpu_s": round(pytrec_cpu, 3),
                "cpu_ratio": round(ek_total_cpu / pytrec_cpu, 3),
                "evalkit_parse_s": round(ek_parse_s, 3),
                "evalkit_score_s": round(ek_score_s, 3),
                "pytrec_eval_parse_s": round(pt_parse_s, 3),
                "pytrec_eval_score_s": round(pt_score_s, 3),
                "ratio_excluding_parsing": round(ek_score_s / pt_score_s, 3),
                "queries": args.queries,
                "docs_per_query": args.docs,
                "max_abs_diff": worst,
            }
        )
    )


if __name__ == "__main__":
    main()
