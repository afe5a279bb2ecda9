"""Read a large run artefact: this tree's reader against an earlier commit's, same run.

    uv run python benchmarks/bench_artifact_read.py                 # 100,000 cases
    uv run python benchmarks/bench_artifact_read.py --cases 10000 --baseline v0.3.0

Builds a seeded target-path run (``--cases`` rows of 10 ids, a short text, three
metrics, a latency and a meta number) and writes it twice: with this tree's writer
(the current schema) and with the writer of ``--baseline`` (a git revision, default
``61eb538``: the code before #27, schema 2), loaded from ``git show`` into this process
(benchmarks/artifact_baseline.py).  Then times each revision's ``read_artifact`` of its
own file, and ``json.loads`` of each text alone (what any reader of that layout pays,
with the collector running as a plain ``json.loads`` has it).  Runs alternate; the
median CPU and wall time of ``--repeat`` are reported with the load average before and
after (CPU time: on a shared machine wall time mostly measures the neighbours), and
both readers must return the same rows.  The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from artifact_baseline import DEFAULT_BASELINE, baseline_artifact_module, figures, medians

from evalkit._spec.artifact import RunArtifact, build_artifact, read_artifact, write_artifact
from evalkit.results import CaseResult, RunResult, TargetResponse


def bench_run(cases: int, seed: int) -> RunArtifact:
    """The seeded target-path run both benchmarks write and read."""
    rng = random.Random(seed)
    rows = [
        CaseResult(
            f"case-{i:06d}",
            TargetResponse(
                ranked_ids=[f"d{rng.randrange(10**6)}" for _ in range(10)],
                text="an answer of a few words",
                latency_ms=rng.random() * 100,
                meta={"cost": rng.random() / 1000},
            ),
            {"ndcg@10": rng.random(), "recall@10": rng.random(), "mrr@10": rng.random()},
        )
        for i in range(cases)
    ]
    return build_artifact(RunResult("bench", rows), ["ndcg@10", "recall@10", "mrr@10"])


def _timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall, CPU) seconds of ``fn()``, the result freed inside the timing."""
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - start, time.process_time() - cpu


def _rows(art: Any) -> list[tuple[Any, ...]]:
    return [
        (r.case_id, r.metrics, r.response.ranked_ids, r.response.text, r.response.meta)
        for r in art.result.per_query
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--baseline", default=DEFAULT_BASELINE, help="git revision to compare")
    args = parser.parse_args()
    old = baseline_artifact_module(args.baseline)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        ours_path, old_path = Path(tmp) / "ours.json", Path(tmp) / "old.json"
        art = bench_run(args.cases, seed=7)
        write_artifact(art, ours_path)
        old.write_artifact(art, old_path)
        del art
        ours_text, old_text = ours_path.read_text(), old_path.read_text()
        versions = (json.loads(ours_text)["schema_version"], json.loads(old_text)["schema_version"])
        if _rows(read_artifact(ours_path)) != _rows(old.read_artifact(old_path)):
            raise SystemExit("the two readers disagree")
        timings: dict[str, list[tuple[float, float]]] = {
            "ours": [],
            "old": [],
            "parse_ours": [],
            "parse_old": [],
        }
        for _ in range(args.repeat):
            timings["ours"].append(_timed(lambda: read_artifact(ours_path)))
            timings["old"].append(_timed(lambda: old.read_artifact(old_path)))
            timings["parse_ours"].append(_timed(lambda: json.loads(ours_text)))
            timings["parse_old"].append(_timed(lambda: json.loads(old_text)))
    load_after = os.getloadavg()[0]
    cpu, wall = medians(timings)
    print(
        f"read {args.cases:,} cases, median of {args.repeat}, "
        f"load average {load_before:.2f} before, {load_after:.2f} after:\n"
        f"  evalkit (this tree, schema {versions[0]}, {len(ours_text):,} characters)\n"
        f"    read_artifact  {cpu['ours']:7.3f} s CPU {wall['ours']:7.3f} s wall\n"
        f"    json.loads     {cpu['parse_ours']:7.3f} s CPU {wall['parse_ours']:7.3f} s wall\n"
        f"  evalkit {args.baseline} (schema {versions[1]}, {len(old_text):,} characters)\n"
        f"    read_artifact  {cpu['old']:7.3f} s CPU {wall['old']:7.3f} s wall\n"
        f"    json.loads     {cpu['parse_old']:7.3f} s CPU {wall['parse_old']:7.3f} s wall\n"
        f"  this tree reads in 1/{cpu['old'] / cpu['ours']:.1f} of the baseline's CPU time "
        f"(1/{wall['old'] / wall['ours']:.1f} of its wall time)"
    )
    print(
        json.dumps(
            {
                **figures(args.cases, args.baseline, cpu, wall, (load_before, load_after)),
                "json_loads_cpu_s": round(cpu["parse_ours"], 3),
                "baseline_json_loads_cpu_s": round(cpu["parse_old"], 3),
                "evalkit_chars": len(ours_text),
                "baseline_chars": len(old_text),
            }
        )
    )


if __name__ == "__main__":
    main()
