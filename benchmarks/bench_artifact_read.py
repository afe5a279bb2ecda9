"""Read a large run artefact: this tree's reader against an earlier commit's, same file.

    uv run python benchmarks/bench_artifact_read.py                 # 100,000 cases
    uv run python benchmarks/bench_artifact_read.py --cases 10000 --baseline v0.3.0

Writes a seeded target-path artefact (``--cases`` rows of 10 ids, a short text, three
metrics, a latency and a meta number), then times ``evalkit._spec.artifact.read_artifact``
of this tree and of ``--baseline`` (a git revision, default ``61eb538``: the reader
before #27), loaded from ``git show`` into this process with its own ``_bounded``
and ``results`` helpers, and ``json.loads`` of the same text alone (what any reader
pays, with the collector running as a plain ``json.loads`` has it).  Runs alternate;
the median CPU and wall time of ``--repeat`` are reported with the load average (CPU
time: on a shared machine wall time mostly measures the neighbours), and both readers
must return the same rows.  The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evalkit._spec.artifact import build_artifact, read_artifact, write_artifact
from evalkit.results import CaseResult, RunResult, TargetResponse

ROOT = Path(__file__).resolve().parents[1]


def _artefact(path: Path, cases: int, seed: int) -> None:
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
    art = build_artifact(RunResult("bench", rows), ["ndcg@10", "recall@10", "mrr@10"])
    write_artifact(art, path)


def _module(name: str, source: str, replace: dict[str, str]) -> types.ModuleType:
    for old, new in replace.items():
        source = source.replace(old, new)
    module = types.ModuleType(name)
    module.__dict__["__name__"] = name
    sys.modules[name] = module
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    return module


def baseline_reader(rev: str) -> Callable[[Path], Any]:
    """``read_artifact`` as of ``rev``, with that revision's ``_bounded`` and ``results``."""

    def show(path: str, before_layers: str) -> str:
        # Revisions before the layer move kept these modules flat under src/evalkit/.
        for where in (path, before_layers):
            done = subprocess.run(
                ["git", "-C", str(ROOT), "show", f"{rev}:src/evalkit/{where}"],
                check=False,
                capture_output=True,
                text=True,
            )
            if done.returncode == 0:
                return done.stdout
        raise SystemExit(f"{rev} has neither src/evalkit/{path} nor src/evalkit/{before_layers}")

    bounded = _module("_bench_old_bounded", show("_util/bounded.py", "_bounded.py"), {})
    results = _module("_bench_old_results", show("_model/results.py", "results.py"), {})
    old = _module(
        "_bench_old_artifact",
        show("_spec/artifact.py", "artifact.py"),
        {
            "from evalkit import _bounded\n": f"import {bounded.__name__} as _bounded\n",
            "from evalkit.results import": f"from {results.__name__} import",
        },
    )
    reader: Callable[[Path], Any] = old.read_artifact
    return reader


def _timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall, CPU) seconds of ``fn()``, the result freed inside the timing."""
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - start, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--baseline", default="61eb538", help="git revision to compare with")
    args = parser.parse_args()
    old_read = baseline_reader(args.baseline)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.json"
        _artefact(path, args.cases, seed=7)
        text = path.read_text()
        ours_art, old_art = read_artifact(path), old_read(path)
        ours_rows = [
            (r.case_id, r.metrics, r.response.ranked_ids, r.response.meta)
            for r in ours_art.result.per_query
        ]
        old_rows = [
            (r.case_id, r.metrics, r.response.ranked_ids, r.response.meta)
            for r in old_art.result.per_query
        ]
        if ours_rows != old_rows or len(ours_rows) != args.cases:
            raise SystemExit("the two readers disagree")
        del ours_art, old_art, ours_rows, old_rows
        timings: dict[str, list[tuple[float, float]]] = {"ours": [], "old": [], "parse": []}
        for _ in range(args.repeat):
            timings["ours"].append(_timed(lambda: read_artifact(path)))
            timings["old"].append(_timed(lambda: old_read(path)))
            timings["parse"].append(_timed(lambda: json.loads(text)))
    load = os.getloadavg()[0]
    wall = {k: statistics.median(w for w, _ in v) for k, v in timings.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in timings.items()}
    print(
        f"read {args.cases:,} cases ({len(text):,} characters), median of {args.repeat}, "
        f"load average {load:.2f}:\n"
        f"  evalkit (this tree)      {cpu['ours']:7.3f} s CPU {wall['ours']:7.3f} s wall\n"
        f"  evalkit {args.baseline:<16} {cpu['old']:7.3f} s CPU {wall['old']:7.3f} s wall"
        f"   ({cpu['old'] / cpu['ours']:.1f}x the CPU, "
        f"{wall['old'] / wall['ours']:.1f}x the wall)\n"
        f"  json.loads alone         {cpu['parse']:7.3f} s CPU {wall['parse']:7.3f} s wall"
    )
    print(
        json.dumps(
            {
                "cases": args.cases,
                "evalkit_cpu_s": round(cpu["ours"], 3),
                "baseline_cpu_s": round(cpu["old"], 3),
                "evalkit_wall_s": round(wall["ours"], 3),
                "baseline_wall_s": round(wall["old"], 3),
                "baseline": args.baseline,
                "cpu_speedup": round(cpu["old"] / cpu["ours"], 2),
                "wall_speedup": round(wall["old"] / wall["ours"], 2),
                "json_loads_cpu_s": round(cpu["parse"], 3),
                "load_avg_1m": round(load, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
