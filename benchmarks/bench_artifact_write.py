"""Write a large run artefact: this tree's writer against an earlier commit's, same run.

    uv run python benchmarks/bench_artifact_write.py                    # 100,000 cases
    uv run python benchmarks/bench_artifact_write.py --cases 10000 --baseline v0.3.0

Builds the seeded target-path run of ``bench_artifact_read.py`` (``--cases`` rows of 10
ids, a short text, three metrics, a latency and a meta number) and times
``write_artifact`` of this tree and of ``--baseline`` (a git revision, default
``61eb538``: the writer before #27), loaded from ``git show`` into this process
(benchmarks/artifact_baseline.py), each writing the run to a file of its own.  Runs
alternate; the median CPU and wall time of ``--repeat`` are reported with the load
average before and after (CPU time: on a shared machine wall time mostly measures the
neighbours and the disk), and the two files must read back to the same rows.  The last
line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from artifact_baseline import DEFAULT_BASELINE, baseline_artifact_module, figures, medians
from bench_artifact_read import _rows, _timed, bench_run

from evalkit._spec.artifact import read_artifact, write_artifact


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--cases", "--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--baseline", default=DEFAULT_BASELINE, help="git revision to compare")
    args = parser.parse_args()
    old = baseline_artifact_module(args.baseline)
    art = bench_run(args.cases, seed=7)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        ours_path, old_path = Path(tmp) / "ours.json", Path(tmp) / "old.json"
        timings: dict[str, list[tuple[float, float]]] = {"ours": [], "old": []}
        for _ in range(args.repeat):
            timings["ours"].append(_timed(lambda: write_artifact(art, ours_path)))
            timings["old"].append(_timed(lambda: old.write_artifact(art, old_path)))
        if _rows(read_artifact(ours_path)) != _rows(old.read_artifact(old_path)):
            raise SystemExit("the two writers wrote different runs")
        sizes = (ours_path.stat().st_size, old_path.stat().st_size)
    load_after = os.getloadavg()[0]
    cpu, wall = medians(timings)
    print(
        f"write {args.cases:,} cases, median of {args.repeat}, "
        f"load average {load_before:.2f} before, {load_after:.2f} after:\n"
        f"  evalkit (this tree)  {cpu['ours']:7.3f} s CPU {wall['ours']:7.3f} s wall "
        f"({sizes[0]:,} bytes)\n"
        f"  evalkit {args.baseline:<12} {cpu['old']:7.3f} s CPU {wall['old']:7.3f} s wall "
        f"({sizes[1]:,} bytes)\n"
        f"  this tree writes in 1/{cpu['old'] / cpu['ours']:.1f} of the baseline's CPU time "
        f"(1/{wall['old'] / wall['ours']:.1f} of its wall time)"
    )
    print(
        json.dumps(
            {
                **figures(args.cases, args.baseline, cpu, wall, (load_before, load_after)),
                "evalkit_bytes": sizes[0],
                "baseline_bytes": sizes[1],
            }
        )
    )


if __name__ == "__main__":
    main()
