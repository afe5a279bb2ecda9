"""Benchmark running a target: wall time against the ideal N·L/c, and honest latency.

A loopback search service with a fixed 20 ms latency runs in its own process (so
its threads do not compete with the client for one interpreter lock), and
``evalkit.evaluate`` sends every case to it through ``HttpTarget`` at concurrency
1, 8, 32 and 64::

    uv run python benchmarks/bench_runner.py            # 1,000 cases
    uv run python benchmarks/bench_runner.py --quick    # 400 cases
    uv run python benchmarks/bench_runner.py --strict   # exit 1 when a target is missed

For each concurrency it reports the wall time of ``evaluate`` (connections opened
on the way included), the ideal ``n * L / c``, and the p50/p95 of the latency
``HttpTarget`` measured per case (nearest-rank).  Targets: at concurrency 32 the
wall time is within 2x of ideal, and the p50 within 5 ms of the server's 20 ms,
i.e. waiting for a slot is not reported as latency.

The last line of output is one JSON object::

    {"n": 1000, "latency_ms": 20, "results": [{"concurrency": c, "wall_s": ...,
     "ideal_s": ..., "p50_ms": ..., "p95_ms": ...}, ...]}
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalkit.execute import evaluate
from evalkit.goldens import GoldenCase, GoldenSet
from evalkit.targets.http import HttpTarget

LATENCY_MS = 20
CONCURRENCIES = (1, 8, 32, 64)
TESTS_DIR = Path(__file__).resolve().parent.parent / "tests"

# The server process: the tests' loopback search service, 20 ms per request.
_SERVER = """
import sys
sys.path.insert(0, {tests!r})
from servers.search import Reply, SearchServer

def answer(request):
    return {{"results": [{{"id": "doc-" + str(request.case_id)}}, {{"id": "other"}}]}}

server = SearchServer().start()
server.route("/search", Reply(json=answer, delay_s={delay!r}))
print(server.port, flush=True)
sys.stdin.read()  # serve until the benchmark closes our stdin
server.stop()
"""


def nearest_rank(values: Sequence[float], pct: float) -> float:
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


def goldens(n: int) -> GoldenSet:
    return GoldenSet(
        GoldenCase(id=f"q{i:05d}", query=f"query {i}", relevant=frozenset({f"doc-q{i:05d}"}))
        for i in range(n)
    )


def start_server() -> tuple[subprocess.Popen[str], str]:
    code = _SERVER.format(tests=str(TESTS_DIR), delay=LATENCY_MS / 1000)
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    port = proc.stdout.readline().strip()
    if not port.isdigit():
        proc.kill()
        raise SystemExit(f"bench_runner: the search server did not start (got {port!r})")
    return proc, f"http://127.0.0.1:{port}/search"


def make_target(url: str) -> HttpTarget:
    return HttpTarget(
        url=url,
        name="search",
        build_payload=lambda case: {"id": case.id, "q": case.query},
        extract=lambda body: [r["id"] for r in body["results"]],
        timeout_s=10.0,
    )


def measure(url: str, gs: GoldenSet, concurrency: int) -> dict[str, Any]:
    with make_target(url) as target:
        start = time.perf_counter()
        result = evaluate(target, gs, ["recall@1"], concurrency=concurrency)
        wall = time.perf_counter() - start
    failed = [row for row in result.per_query if row.error]
    if failed:
        raise SystemExit(f"bench_runner: {len(failed)} case(s) failed: {failed[0].error}")
    if result.mean("recall@1") != 1.0:
        raise SystemExit("bench_runner: rows were mixed up between cases")
    latencies = [row.response.latency_ms for row in result.per_query if row.response]
    n = len(gs)
    return {
        "concurrency": concurrency,
        "wall_s": round(wall, 3),
        "ideal_s": round(n * LATENCY_MS / 1000 / concurrency, 3),
        "p50_ms": round(nearest_rank(latencies, 50), 2),
        "p95_ms": round(nearest_rank(latencies, 95), 2),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="400 cases instead of 1,000")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)
    n = 400 if args.quick else 1000
    gs = goldens(n)
    server, url = start_server()
    try:
        with make_target(url) as warm:  # the server's first request pays its imports
            warm.invoke(gs[0])
        results = []
        print(f"{n} cases, server latency {LATENCY_MS} ms")
        header = ("concurrency", "wall_s", "ideal_s", "ratio", "p50_ms", "p95_ms")
        print("{:>11} {:>8} {:>8} {:>6} {:>7} {:>7}".format(*header))
        for concurrency in CONCURRENCIES:
            row = measure(url, gs, concurrency)
            results.append(row)
            ratio = row["wall_s"] / row["ideal_s"]
            print(
                f"{concurrency:>11} {row['wall_s']:>8.3f} {row['ideal_s']:>8.3f} {ratio:>6.2f} "
                f"{row['p50_ms']:>7.2f} {row['p95_ms']:>7.2f}",
                flush=True,
            )
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)
    at32 = next(r for r in results if r["concurrency"] == 32)
    wall_ok = at32["wall_s"] <= 2 * at32["ideal_s"]
    p50_ok = abs(at32["p50_ms"] - LATENCY_MS) <= 5
    print(
        f"targets at concurrency 32: wall within 2x of ideal: {'yes' if wall_ok else 'NO'}; "
        f"p50 within 5 ms of {LATENCY_MS} ms: {'yes' if p50_ok else 'NO'}"
    )
    print(json.dumps({"n": n, "latency_ms": LATENCY_MS, "results": results}))
    return 1 if args.strict and not (wall_ok and p50_ok) else 0


if __name__ == "__main__":
    sys.exit(main())
