"""Latency is client-observed and honest: p50 within 1 ms of the server's own (#45).

``HttpTarget`` times each case on its own clock, from before the first send to the last
byte read; the runner warns (``ClientSaturationWarning``) when the client's CPU set the
pace.  At every concurrency the warning accepts, a case's latency must carry nothing
beyond the server's own time and the client's own work for that request: the median of

    client latency - server's own time - the client thread's CPU time and wait for a CPU
    (both over the latency window)

stays within 1 ms.  Cases queueing behind each other in the client (for the interpreter
lock, a connection, a slot) would show there; the client's CPU speed would not, so the
test holds on a loaded shared machine as on a quiet one.  What the client's own work
costs is printed by ``benchmarks/bench_runner.py`` (p50 client / server).

Measured so that neither the server nor the machine's other work is charged to the client:

* the server is its own process (its CPU is not the client's, and it never holds the
  client's interpreter lock), and it reports its interval in the reply: from the kernel's
  receive time of the request (``SO_TIMESTAMPNS``, so a server slow to wake is not the
  client's) to just before it writes the reply, on ``CLOCK_MONOTONIC`` like
  ``perf_counter``.  That interval lies inside the client's (a causal bound, checked);
* the client thread's CPU time (``time.thread_time``) and run-queue wait
  (``/proc/thread-self/schedstat``) are read around ``run_attempts``, the latency window.
"""

from __future__ import annotations

import math
import statistics
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import evalkit.targets.http as http
from evalkit._engine.client_load import MIN_WALL_S, ClientSaturationWarning
from evalkit._engine.execute import evaluate
from evalkit.goldens import GoldenCase, GoldenSet
from evalkit.targets import HttpTarget, TargetResponse
from evalkit.targets.http_exchange import Attempt

SERVICE_S = 0.02
CONCURRENCIES = (1, 2, 4, 8, 16, 32)
MOST_EXCESS_MS = 1.0
CLOCK_SKEW_MS = 0.1  # the kernel's wall-clock stamp, moved onto the monotonic clock
SCHEDSTAT = Path("/proc/thread-self/schedstat")

SERVER = r"""
import json, socket, struct, sys, threading, time
from urllib.parse import parse_qs, urlsplit

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
service_s = float(sys.argv[1])
# The kernel stamps with the wall clock; replies carry CLOCK_MONOTONIC (perf_counter).
wall_minus_mono = min(
    (time.time() - time.perf_counter() for _ in range(5)), key=abs
)

def stamp_of(ancillary):
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
            seconds, nanos = struct.unpack("@ll", data[:16])
            return seconds + nanos / 1e9 - wall_minus_mono
    return None

def serve(conn):
    conn.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    pending, arrived = b"", None
    with conn:
        while True:
            data, ancillary, _, _ = conn.recvmsg(65536, 256)
            if not data:
                return
            if arrived is None:
                arrived = stamp_of(ancillary) or time.perf_counter()
            pending += data
            while b"\r\n\r\n" in pending:
                head, pending = pending.split(b"\r\n\r\n", 1)
                target = head.split(b" ", 2)[1].decode()
                case = parse_qs(urlsplit(target).query)["id"][0]
                time.sleep(service_s)
                body = json.dumps({
                    "results": [{"id": "doc-" + case}],
                    "server_in": arrived,
                    "server_out": time.perf_counter(),
                }).encode()
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + b"Content-Length: %d\r\n\r\n" % len(body) + body
                )
                arrived = None

listener = socket.create_server(("127.0.0.1", 0))
print(listener.getsockname()[1], flush=True)
while True:
    conn, _ = listener.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
"""


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    if not SCHEDSTAT.exists():
        pytest.skip("no /proc/thread-self/schedstat: the run-queue wait cannot be measured")
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(SERVICE_S)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    port = server.stdout.readline().strip()  # the event: its port, or EOF if it died
    if not port.isdigit():
        server.kill()
        _, err = server.communicate(timeout=60)
        pytest.fail(f"the latency server did not start: {port!r}, stderr: {err}")
    try:
        yield f"http://127.0.0.1:{port}/search"
    finally:
        server.kill()
        server.communicate(timeout=60)


def run_queue_wait_s() -> float:
    return int(SCHEDSTAT.read_text().split()[1]) / 1e9


def own_time_s() -> float:
    """This thread's CPU time plus its wait for a CPU: what it did or wanted to do."""
    return time.thread_time() + run_queue_wait_s()


_waited = threading.local()


def probed_run_attempts(
    real: Callable[[Callable[[], Attempt]], tuple[list[Attempt], float]],
) -> Callable[[Callable[[], Attempt]], tuple[list[Attempt], float]]:
    """``run_attempts`` that also notes its thread's CPU time and wait for a CPU meanwhile."""

    def run(send: Callable[[], Attempt]) -> tuple[list[Attempt], float]:
        before = own_time_s()
        outcome = real(send)
        _waited.ms = (own_time_s() - before) * 1000.0
        return outcome

    return run


class Probed(HttpTarget):
    def invoke(self, case: GoldenCase) -> TargetResponse:
        response = super().invoke(case)
        response.meta["own_ms"] = _waited.ms
        return response


def cases_for(concurrency: int) -> int:
    """Enough for a run long enough to judge (MIN_WALL_S) even at the ideal pace."""
    return max(60, math.ceil(1.2 * MIN_WALL_S * concurrency / SERVICE_S))


def golden(n: int) -> GoldenSet:
    return GoldenSet(
        GoldenCase(id=f"c{i:04d}", query="q", relevant=frozenset({f"doc-c{i:04d}"}))
        for i in range(n)
    )


def overheads_ms(url: str, concurrency: int) -> tuple[list[tuple[float, float]], str | None]:
    """Per case (latency - server's own time, the client's own work); and the warning."""
    with (
        Probed(
            url,
            "search",
            lambda case: {"id": case.id},
            lambda body: [r["id"] for r in body["results"]],
            method="GET",
            meta_keys=("server_in", "server_out"),
        ) as target,
        warnings.catch_warnings(record=True) as caught,
    ):
        warnings.simplefilter("always", ClientSaturationWarning)
        result = evaluate(
            target, golden(cases_for(concurrency)), ["recall@1"], concurrency=concurrency
        )
    assert result.mean("recall@1") == 1.0, [r.error for r in result.per_query if r.error][:3]
    overheads: list[tuple[float, float]] = []
    for row in result.per_query:
        assert row.response is not None
        meta: dict[str, Any] = row.response.meta
        server_ms = (meta["server_out"] - meta["server_in"]) * 1000.0
        excess = row.response.latency_ms - server_ms
        assert excess >= -CLOCK_SKEW_MS, (row.case_id, excess)  # causal: inside the client's
        overheads.append((excess, meta["own_ms"]))
    warned = [str(w.message) for w in caught if issubclass(w.category, ClientSaturationWarning)]
    return overheads, warned[0] if warned else None


def test_p50_stays_within_1_ms_of_the_servers_own_where_the_client_is_not_saturated(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(http, "run_attempts", probed_run_attempts(http.run_attempts))
    overheads_ms(url, 1)  # warm: imports, the server's first stamps
    checked: dict[int, float] = {}
    seen: dict[int, str] = {}
    for concurrency in CONCURRENCIES:
        pairs, warning = overheads_ms(url, concurrency)
        excess = statistics.median([e for e, _ in pairs])
        queued = statistics.median([e - own for e, own in pairs])
        seen[concurrency] = f"excess {excess:.2f} ms, beyond own work {queued:.2f} ms" + (
            " (warned)" if warning else ""
        )
        if warning is None:
            checked[concurrency] = queued
    print(f"p50 above the server's own, by concurrency: {seen}")  # shown with -s
    assert 1 in checked, seen  # one case at a time is never judged saturated
    over = [c for c, ms in checked.items() if ms > MOST_EXCESS_MS]
    assert not over, f"p50 by concurrency: {seen}"
