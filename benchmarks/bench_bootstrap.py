"""Benchmark the paired bootstrap: the naive implementation, evalkit, and scipy.

For B = 10,000 resamples, n = 10**3, 10**4, 10**5 cases (10**6 with --large),
1 and 10 metrics, continuous differences (no shortcut applies) and discrete ones
(rank-based metrics: recall@k, MRR, nDCG of the first hit -- a few hundred
distinct per-case difference tuples), time:

* ``naive``: one (B x n) index matrix, gather, mean -- what the obvious
  implementation does (skipped where it would need more than 4 GB);
* ``evalkit``: :func:`evalkit.stats.significance.compare_metrics` (the engine behind
  ``paired_bootstrap``, all metrics in one pass);
* ``scipy``: ``scipy.stats.bootstrap`` on (a, b) with ``paired=True``,
  ``method="percentile"``, batched to bound its memory (1 metric only, n <= 10**5;
  a dev-only reference).

Each configuration runs in its own subprocess, so the peak RSS reported is that
configuration's alone (it includes the interpreter and numpy, ~30-40 MB).
Wall time covers the computation only, not the imports or the data generation.

    uv run python benchmarks/bench_bootstrap.py            # the standard grid
    uv run python benchmarks/bench_bootstrap.py --large    # adds n = 10**6
    uv run python benchmarks/bench_bootstrap.py --only evalkit --sizes 100000

The last line of output is one JSON object::

    {"results": [{"method": ..., "n": ..., "metrics": 1|10,
                  "kind": "continuous"|"discrete", "wall_s": ..., "peak_mb": ...}, ...]}
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

NAIVE_LIMIT_BYTES = 4 * 2**30
SCIPY_MAX_N = 100_000
METHODS = ("naive", "evalkit", "scipy")


def make_column(n: int, j: int, kind: str) -> tuple[FloatArray, FloatArray]:
    """Metric j's per-case scores for both systems."""
    rng = np.random.default_rng([12345, j])
    if kind == "continuous":
        base = rng.uniform(0, 1, n)
        return base + rng.normal(0.01, 0.2, n), base
    # a rank-based metric of the first relevant result (21 = not retrieved); every
    # metric reads the same two rankings, as recall@k, MRR and nDCG of one run do
    same = np.random.default_rng(12345)
    ranks = [np.minimum(same.geometric(p, n), 21) for p in (0.35, 0.3)]
    return RANK_METRICS[j % len(RANK_METRICS)](ranks[0]), RANK_METRICS[j % len(RANK_METRICS)](
        ranks[1]
    )


def _hit(k: int) -> Callable[[NDArray[np.int64]], FloatArray]:
    return lambda rank: (rank <= k).astype(np.float64)


def _reciprocal(cut: int) -> Callable[[NDArray[np.int64]], FloatArray]:
    return lambda rank: np.where(rank <= cut, 1.0 / rank, 0.0)


def _dcg(cut: int) -> Callable[[NDArray[np.int64]], FloatArray]:
    return lambda rank: np.where(rank <= cut, 1.0 / np.log2(rank + 1.0), 0.0)


# recall@1/3/5/10/20, MRR@10/20, nDCG@10/20 of a single relevant item, hit@2
RANK_METRICS = (
    _hit(1),
    _hit(3),
    _hit(5),
    _hit(10),
    _hit(20),
    _reciprocal(10),
    _reciprocal(20),
    _dcg(10),
    _dcg(20),
    _hit(2),
)


def make_diffs(n: int, metrics: int, kind: str) -> FloatArray:
    """Per-case differences a - b (n x metrics), built one metric at a time."""
    d = np.empty((n, metrics), dtype=np.float64)
    for j in range(metrics):
        a, b = make_column(n, j, kind)
        d[:, j] = a - b
    return d


def run_naive(d: FloatArray, resamples: int) -> None:
    n, k = d.shape
    idx = np.random.default_rng(42).integers(0, n, size=(resamples, n))
    for j in range(k):
        column = d[:, j]
        resampled = column[idx].mean(axis=1)
        observed = column.mean()
        np.quantile(resampled, [0.025, 0.975])
        np.count_nonzero(np.abs(resampled - observed) >= abs(observed))


def run_evalkit(d: FloatArray, resamples: int) -> None:
    from evalkit.stats.significance import compare_metrics

    compare_metrics({f"m{j}": d[:, j] for j in range(d.shape[1])}, n_resamples=resamples)


def run_scipy(a: FloatArray, b: FloatArray, resamples: int) -> None:
    from scipy import stats  # type: ignore[import-untyped]  # dev-only, no stubs

    n = a.shape[0]
    batch = max(1, (64 * 2**20) // (8 * n * 4))  # keep scipy's resample arrays near 64 MB

    def delta(x: FloatArray, y: FloatArray, axis: int) -> FloatArray:
        out: FloatArray = x.mean(axis=axis) - y.mean(axis=axis)
        return out

    for j in range(a.shape[1]):
        stats.bootstrap(
            (a[:, j], b[:, j]),
            delta,
            paired=True,
            vectorized=True,
            method="percentile",
            n_resamples=resamples,
            batch=batch,
            random_state=np.random.default_rng(42),
        )


def warm_imports(method: str) -> None:
    """Import outside the timed region (scipy.stats alone takes ~1 s to import)."""
    if method == "evalkit":
        import evalkit.stats.significance  # noqa: F401
    elif method == "scipy":
        import scipy.stats  # type: ignore[import-untyped]  # noqa: F401


def one(method: str, n: int, metrics: int, kind: str, resamples: int) -> dict[str, Any]:
    warm_imports(method)
    if method == "scipy":
        columns = [make_column(n, j, kind) for j in range(metrics)]
        a = np.column_stack([c[0] for c in columns])
        b = np.column_stack([c[1] for c in columns])
        del columns
        start = time.perf_counter()
        run_scipy(a, b, resamples)
    else:
        # the paired engines need only the differences
        d = make_diffs(n, metrics, kind)
        start = time.perf_counter()
        (run_naive if method == "naive" else run_evalkit)(d, resamples)
    wall = time.perf_counter() - start
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {
        "method": method,
        "n": n,
        "metrics": metrics,
        "kind": kind,
        "wall_s": round(wall, 3),
        "peak_mb": round(peak_kb / 1024, 1),
    }


def skip_reason(method: str, n: int, metrics: int, resamples: int) -> str | None:
    if method == "naive" and 2 * 8 * resamples * n > NAIVE_LIMIT_BYTES:
        need = 2 * 8 * resamples * n / 2**30
        return f"naive needs ~{need:.0f} GB (index matrix + gathered values)"
    if method == "scipy" and (metrics != 1 or n > SCIPY_MAX_N):
        return "scipy reference runs for 1 metric, n <= 1e5 only"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--large", action="store_true", help="add n = 10**6")
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--sizes", type=int, nargs="*", help="override the list of n")
    parser.add_argument("--only", choices=METHODS, action="append", help="methods to run")
    parser.add_argument("--metrics", type=int, choices=(1, 10), action="append")
    parser.add_argument("--kind", choices=("continuous", "discrete"), action="append")
    parser.add_argument("--one", nargs=4, metavar=("METHOD", "N", "METRICS", "KIND"))
    args = parser.parse_args(argv)

    if args.one:
        method, n, metrics, kind = args.one
        print(json.dumps(one(method, int(n), int(metrics), kind, args.resamples)))
        return 0

    sizes = args.sizes or [1_000, 10_000, 100_000] + ([1_000_000] if args.large else [])
    results: list[dict[str, Any]] = []
    print(f"{'method':<8} {'n':>8} {'metrics':>7} {'kind':<10} {'wall_s':>8} {'peak_mb':>8}")
    for n in sizes:
        for metrics in args.metrics or [1, 10]:
            for kind in args.kind or ["continuous", "discrete"]:
                for method in args.only or list(METHODS):
                    label = f"{method:<8} {n:>8} {metrics:>7} {kind:<10}"
                    reason = skip_reason(method, n, metrics, args.resamples)
                    if reason:
                        print(f"{label} {'skipped':>8}  ({reason})", flush=True)
                        continue
                    command = [sys.executable, __file__, "--resamples", str(args.resamples)]
                    command += ["--one", method, str(n), str(metrics), kind]
                    done = subprocess.run(command, capture_output=True, text=True, check=True)
                    row = json.loads(done.stdout.strip().splitlines()[-1])
                    results.append(row)
                    print(f"{label} {row['wall_s']:>8.2f} {row['peak_mb']:>8.1f}", flush=True)
    print(json.dumps({"results": results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
