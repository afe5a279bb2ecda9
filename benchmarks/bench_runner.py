"""Benchmark running a target: wall time against the ideal N·L/c, and honest latency.

``evalkit.evaluate`` sends every case through ``HttpTarget`` (GET, httpx) to a service
that answers after a fixed 20 ms, at concurrency 8, 32, 64 and 128, against two
servers in their own processes:

* **nginx** with the echo module (``echo_sleep 0.02;`` then a fixed JSON body):
  its own CPU cost per request is negligible, so what the client measures beyond
  the server's 20 ms is the runner's.  The benchmark starts and stops nginx
  itself (own prefix, config, pid and logs in a temp dir, a free loopback port,
  ``load_module`` for the echo module).  Without nginx the row is skipped and
  the benchmark says how to install it.
* **nginx/async** (``--asyncio``): the road not taken, in the same run:
  coroutines on one ``httpx.AsyncClient`` against the same nginx, with no evalkit
  in the loop (the best an asyncio path on httpx could do).
* **python**: the tests' threaded ``SearchServer``, which competes with the
  client for the same cores.

Run::

    uv run python benchmarks/bench_runner.py            # 1,000 cases per row
    uv run python benchmarks/bench_runner.py --quick    # 400 cases per row
    uv run python benchmarks/bench_runner.py --asyncio  # + the same nginx from httpx.AsyncClient

It measures; it sets no target and never fails on a figure.  Per server and
concurrency it prints: the wall time of ``evaluate`` (connections opened on the way
included) and the ideal ``n * L / c``; the p50/p95 latency the client measured per case
(nearest-rank) next to the p50/p95 the *server* logged for the same requests (nginx
``$request_time``, 1 ms resolution; the Python server's own clock); the client process's
CPU seconds per request (``time.process_time``, every thread of the client, none of the
server's); the *cpu floor*: that CPU time over the ideal wall time (the client's Python
runs one thread at a time, so the wall time cannot fall below its CPU time); and the
run's client-saturation warning, if it gave one.  Other work on the machine inflates
every figure: the load average is printed before and after.

The last line of output is one JSON object::

    {"n": 1000, "latency_ms": 20, "cpus": 2, "loadavg_before": [...], "loadavg_after": [...],
     "servers": {"nginx": {"available": true, "detail": "...", "results": [ROW, ...]},
                 "python": {...}}}   # + "nginx_asyncio" with --asyncio

where ROW is ``{"concurrency", "wall_s", "ideal_s", "ratio", "p50_ms", "p95_ms",
"server_p50_ms", "server_p95_ms", "client_cpu_s_per_request", "cpu_floor_ratio",
"saturation"}``
(``saturation`` is the run's client-saturation warning, or null).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit._engine.client_load import ClientSaturationWarning
from evalkit._engine.execute import evaluate
from evalkit._model.golden_cases import GoldenCase, GoldenSet
from evalkit.targets.http import HttpTarget

LATENCY_MS = 20
CONCURRENCIES = (8, 32, 64, 128)
TESTS_DIR = Path(__file__).resolve().parent.parent / "tests"
INSTALL_HINT = (
    "install nginx and its echo module to get the nginx row: "
    "sudo apt-get install nginx-light libnginx-mod-http-echo (Debian/Ubuntu)"
)
ECHO_MODULE_DIRS = (
    "/usr/lib/nginx/modules",
    "/usr/lib64/nginx/modules",
    "/usr/share/nginx/modules",
    "/usr/local/nginx/modules",
)

# The Python server process: the tests' loopback search service.  Each line
# "stats" on stdin prints the milliseconds it spent on each request since the
# last "stats" (one JSON list); end of stdin stops it.
_PYTHON_SERVER = """
import json, sys
sys.path.insert(0, {tests!r})
from servers.search import Reply, SearchServer

def answer(request):
    return {{"results": [{{"id": "doc-" + str(request.case_id)}}, {{"id": "other"}}]}}

server = SearchServer().start()
server.route("/search", Reply(json=answer, delay_s={delay!r}))
print(server.port, flush=True)
for line in sys.stdin:
    server.wait_idle()
    own = [(r.completed_at - r.received_at) * 1000 for r in server.requests("/search")]
    server.clear()
    print(json.dumps(own), flush=True)
server.stop()
"""

_NGINX_CONF = """\
load_module {module};
daemon off;
master_process off;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    log_format own '$request_time';
    access_log {prefix}/access.log own;
    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    keepalive_requests 1000000;
    keepalive_timeout 120s;
    server {{
        listen 127.0.0.1:{port};
        location /search {{
            default_type application/json;
            echo_sleep {delay};
            echo '{{"results": [{{"id": "doc-$arg_id"}}, {{"id": "other"}}]}}';
        }}
    }}
}}
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """A running fixed-latency service: its URL and the latencies it logged itself."""

    name: str
    url: str

    def own_latencies_ms(self, expect: int) -> list[float]:
        """Milliseconds the server spent on each of the ``expect`` requests since the last call."""
        raise NotImplementedError


@dataclass
class NginxServer(Server):
    name: str
    url: str
    log: Path
    offset: int = 0

    def own_latencies_ms(self, expect: int) -> list[float]:
        # nginx logs a request after its reply went out: the last lines may lag a moment.
        deadline = time.monotonic() + 10
        while True:
            with self.log.open("rb") as f:
                f.seek(self.offset)
                data = f.read()
            lines = data.splitlines(keepends=True)
            if len(lines) >= expect or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        taken = lines[:expect]
        self.offset += sum(len(line) for line in taken)
        return [float(line) * 1000 for line in taken]


@dataclass
class PythonServer(Server):
    name: str
    url: str
    proc: subprocess.Popen[str]

    def own_latencies_ms(self, expect: int) -> list[float]:  # noqa: ARG002  (wait_idle suffices)
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.proc.stdin.write("stats\n")
        self.proc.stdin.flush()
        own: list[float] = json.loads(self.proc.stdout.readline())
        return own


def find_nginx() -> tuple[str, str] | str:
    """(nginx binary, echo module path), or why nginx cannot be used."""
    binary = shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.access(p, os.X_OK)), None
    )
    if binary is None:
        return f"nginx not found; {INSTALL_HINT}"
    for folder in ECHO_MODULE_DIRS:
        module = Path(folder) / "ngx_http_echo_module.so"
        if module.is_file():
            return binary, str(module)
    return f"nginx found ({binary}) but not its echo module; {INSTALL_HINT}"


class PortTaken(Exception):
    """Another process bound the free port between our probe and nginx's bind."""


@contextlib.contextmanager
def nginx_server(binary: str, module: str) -> Iterator[NginxServer]:
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-nginx-") as tmp:
        prefix = Path(tmp)
        for attempt in range(3):
            port = free_port()
            conf = prefix / "nginx.conf"
            conf.write_text(
                _NGINX_CONF.format(module=module, prefix=prefix, port=port, delay=LATENCY_MS / 1000)
            )
            proc = subprocess.Popen(
                [binary, "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log")],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            try:
                _wait_listening(port, proc, prefix / "error.log")
            except PortTaken:
                if attempt == 2:
                    raise SystemExit("bench_runner: no free loopback port for nginx") from None
                continue
            break
        try:
            yield NginxServer("nginx", f"http://127.0.0.1:{port}/search", prefix / "access.log")
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_listening(port: int, proc: subprocess.Popen[str], error_log: Path) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            err = (proc.stderr.read() if proc.stderr else "") or (
                error_log.read_text() if error_log.exists() else ""
            )
            if "Address already in use" in err:
                raise PortTaken(err)
            raise SystemExit(f"bench_runner: nginx exited at start: {err.strip()}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            if proc.poll() is None:  # ours answered, not whoever may have the port
                return
        time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"bench_runner: nginx did not listen on 127.0.0.1:{port} within 10 s")


@contextlib.contextmanager
def python_server() -> Iterator[PythonServer]:
    code = _PYTHON_SERVER.format(tests=str(TESTS_DIR), delay=LATENCY_MS / 1000)
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    assert proc.stdin is not None
    try:
        port = proc.stdout.readline().strip()
        if not port.isdigit():
            raise SystemExit(f"bench_runner: the Python server did not start (got {port!r})")
        yield PythonServer("python", f"http://127.0.0.1:{port}/search", proc)
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def make_target(url: str) -> HttpTarget:
    return HttpTarget(
        url=url,
        name="search",
        method="GET",
        build_payload=lambda case: {"id": case.id},
        extract=lambda body: [r["id"] for r in body["results"]],
        timeout_s=10.0,
    )


def measure(server: Server, gs: GoldenSet, concurrency: int) -> dict[str, Any]:
    with make_target(server.url) as target, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ClientSaturationWarning)
        start = time.perf_counter()
        cpu_start = time.process_time()
        result = evaluate(target, gs, ["recall@1"], concurrency=concurrency)
        cpu = time.process_time() - cpu_start
        wall = time.perf_counter() - start
    failed = [row for row in result.per_query if row.error]
    if failed:
        raise SystemExit(f"bench_runner: {len(failed)} case(s) failed: {failed[0].error}")
    if result.mean("recall@1") != 1.0:
        raise SystemExit("bench_runner: rows were mixed up between cases")
    latencies = [row.response.latency_ms for row in result.per_query if row.response]
    saturation = [str(w.message) for w in caught if issubclass(w.category, ClientSaturationWarning)]
    return summarise(
        server, gs, concurrency, wall, cpu, latencies, saturation[0] if saturation else None
    )


def summarise(
    server: Server,
    gs: GoldenSet,
    concurrency: int,
    wall: float,
    cpu: float,
    latencies: list[float],
    saturation: str | None,
) -> dict[str, Any]:
    own = server.own_latencies_ms(len(gs))
    if len(own) != len(gs):
        raise SystemExit(f"bench_runner: {server.name} logged {len(own)} requests, not {len(gs)}")
    n = len(gs)
    ideal = n * LATENCY_MS / 1000 / concurrency
    return {
        "concurrency": concurrency,
        "wall_s": round(wall, 3),
        "ideal_s": round(ideal, 3),
        "ratio": round(wall / ideal, 2),
        "p50_ms": round(nearest_rank(latencies, 50), 2),
        "p95_ms": round(nearest_rank(latencies, 95), 2),
        "server_p50_ms": round(nearest_rank(own, 50), 2),
        "server_p95_ms": round(nearest_rank(own, 95), 2),
        "client_cpu_s_per_request": round(cpu / n, 6),
        # The wall time the client's CPU alone imposes (its Python runs one thread at a
        # time), over the ideal: the ratio cannot fall below this on this machine (#27).
        "cpu_floor_ratio": round(cpu / ideal, 2),
        "saturation": saturation,
    }


HEADER = (
    f"{'server':>11} {'c':>4} {'wall_s':>7} {'ideal_s':>7} {'ratio':>5}  "
    f"{'p50 client/server ms':>20}  {'p95 client/server ms':>20}  {'cpu ms/req':>10} "
    f"{'cpu floor':>9}"
)


def show(server: str, row: dict[str, Any]) -> str:
    p50 = f"{row['p50_ms']:.2f} / {row['server_p50_ms']:.2f}"
    p95 = f"{row['p95_ms']:.2f} / {row['server_p95_ms']:.2f}"
    cpu_ms = row["client_cpu_s_per_request"] * 1000
    line = (
        f"{server:>11} {row['concurrency']:>4} {row['wall_s']:>7.3f} {row['ideal_s']:>7.3f} "
        f"{row['ratio']:>5.2f}  {p50:>20}  {p95:>20}  {cpu_ms:>10.3f} "
        f"{row['cpu_floor_ratio']:>8.2f}x"
    )
    if row["saturation"]:
        line += f"\n{'':>17}warning: {row['saturation']}"
    return line


def measure_asyncio(server: Server, gs: GoldenSet, concurrency: int) -> dict[str, Any]:
    """The road not taken: ``concurrency`` coroutines on one ``httpx.AsyncClient``.

    No evalkit in the loop (no target, scoring or rows): the best an asyncio path on
    httpx could do.  Latency is timed around each request as a coroutine sees it.
    """
    import asyncio

    import httpx

    latencies: list[float] = []

    async def run() -> None:
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=concurrency)
        async with httpx.AsyncClient(limits=limits, timeout=10.0) as client:
            cases = iter(gs)

            async def worker() -> None:
                for case in cases:
                    began = time.perf_counter()
                    reply = await client.get(server.url, params={"id": case.id})
                    latencies.append((time.perf_counter() - began) * 1000)
                    if reply.json()["results"][0]["id"] != f"doc-{case.id}":
                        raise SystemExit("bench_runner: asyncio rows were mixed up")

            await asyncio.gather(*(worker() for _ in range(concurrency)))

    start = time.perf_counter()
    cpu_start = time.process_time()
    asyncio.run(run())
    cpu = time.process_time() - cpu_start
    wall = time.perf_counter() - start
    return summarise(server, gs, concurrency, wall, cpu, latencies, None)


def run_rows(
    server: Server, gs: GoldenSet, label: str, path: str = "target"
) -> list[dict[str, Any]]:
    with make_target(server.url) as warm:  # the server's first request pays its imports
        warm.invoke(gs[0])
    server.own_latencies_ms(1)  # the warm-up is not a row's
    rows = []
    for concurrency in CONCURRENCIES:
        if path == "asyncio":
            row = measure_asyncio(server, gs, concurrency)
        else:
            row = measure(server, gs, concurrency)
        rows.append(row)
        print(show(label, row), flush=True)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="400 cases per row, not 1,000")
    parser.add_argument(
        "--asyncio",
        action="store_true",
        help="also run the same nginx from coroutines on one httpx.AsyncClient (slow at c>=64)",
    )
    args = parser.parse_args(argv)
    n = 400 if args.quick else 1000
    gs = goldens(n)
    load_before = [round(x, 2) for x in os.getloadavg()]
    print(
        f"{n} cases per row, server latency {LATENCY_MS} ms, {os.cpu_count()} CPUs, "
        f"load average {load_before[0]} {load_before[1]} {load_before[2]} (1/5/15 min)"
    )
    print("wall = evaluate() start to end; ideal = n * 20 ms / c; latency p50/p95 nearest-rank")
    print(HEADER)
    servers: dict[str, dict[str, Any]] = {}
    found = find_nginx()
    if isinstance(found, str):
        print(f"      nginx: skipped: {found}")
        servers["nginx"] = {"available": False, "detail": found, "results": []}
    else:
        with nginx_server(*found) as nginx:
            servers["nginx"] = {
                "available": True,
                "detail": found[0],
                "results": run_rows(nginx, gs, "nginx"),
            }
            if args.asyncio:
                servers["nginx_asyncio"] = {
                    "available": True,
                    "detail": "baseline: the same nginx, coroutines on one httpx.AsyncClient",
                    "results": run_rows(nginx, gs, "nginx/async", path="asyncio"),
                }
    with python_server() as python:
        servers["python"] = {
            "available": True,
            "detail": "tests/servers/search.py, threaded, its own process",
            "results": run_rows(python, gs, "python"),
        }
    load_after = [round(x, 2) for x in os.getloadavg()]
    print(f"load average after: {load_after[0]} {load_after[1]} {load_after[2]}")
    print(
        json.dumps(
            {
                "n": n,
                "latency_ms": LATENCY_MS,
                "cpus": os.cpu_count(),
                "loadavg_before": load_before,
                "loadavg_after": load_after,
                "servers": servers,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
