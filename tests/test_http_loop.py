"""The one-thread loop (``targets/http_loop.py``) gives the rows the threaded path gives.

``evaluate`` runs a lean ``http://`` HttpTarget's cases on the calling thread (one
selector over non-blocking sockets) instead of a thread per case.  Each scenario here
runs the same cases against the same real loopback server both ways, the threaded path
forced by ``runs_cases_on_one_thread`` saying no, and the rows (ids, errors word for
word) must be equal: retries, dropped and reset connections, a server closing its
keep-alive connections, slow bodies, partial replies, network and case timeouts, a
refused connection, a body that is not JSON.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from evalkit._engine.execute import evaluate
from evalkit._model.registry import isolated, register_metric
from evalkit._model.results import CaseResult, RunResult, TargetResponse
from evalkit.goldens import GoldenCase, GoldenSet
from evalkit.targets import HttpTarget
from servers.search import Drop, RecordedRequest, Reset, SearchServer, Step
from servers.search import Reply as Http


def golden(n: int) -> GoldenSet:
    return GoldenSet(
        GoldenCase(id=f"c{i:03d}", query=f"q {i}", relevant=frozenset({f"doc-c{i:03d}"}))
        for i in range(n)
    )


def answer(request: RecordedRequest) -> dict[str, Any]:
    return {"results": [{"id": f"doc-{request.case_id}"}, {"id": "filler"}]}


OK = Http(json=answer)


def make_target(url: str, timeout_s: float = 5.0) -> HttpTarget:
    return HttpTarget(
        url=url,
        name="search",
        method="GET",
        build_payload=lambda case: {"id": case.id},
        extract=lambda body: [r["id"] for r in body["results"]],
        timeout_s=timeout_s,
    )


def rows(result: RunResult[CaseResult]) -> list[tuple[str, str | None, list[str] | None]]:
    return [
        (r.case_id, r.error, list(r.response.ranked_ids or []) if r.response is not None else None)
        for r in result.per_query
    ]


def both_ways(
    monkeypatch: pytest.MonkeyPatch, url: str, n: int, **kwargs: Any
) -> tuple[RunResult[CaseResult], RunResult[CaseResult]]:
    """The same run on the loop, then on threads (a fresh target each)."""
    timeout_s = kwargs.pop("timeout_s", 5.0)
    kwargs.setdefault("concurrency", 4)
    with make_target(url, timeout_s) as t:
        assert t.runs_cases_on_one_thread()
        looped = evaluate(t, golden(n), ["recall@1"], **kwargs)
    with monkeypatch.context() as m:
        m.setattr(HttpTarget, "runs_cases_on_one_thread", lambda self: False)
        with make_target(url, timeout_s) as t:
            threaded = evaluate(t, golden(n), ["recall@1"], **kwargs)
    return looped, threaded


@pytest.fixture
def server() -> Iterator[SearchServer]:
    with SearchServer(seed=5) as running:
        yield running


SCENARIOS: dict[str, tuple[tuple[Step, ...], dict[str, Any]]] = {
    "answers": ((OK,), {}),
    "503 then an answer": ((Http(status=503), OK), {}),
    "503 twice": ((Http(status=503, body="down"),), {}),
    "dropped then an answer": ((Drop(), OK), {}),
    "reset every time": ((Reset(),), {}),
    "server closes each keep-alive": ((Http(json=answer, headers={"Connection": "close"}),), {}),
    "slow body": ((Http(json=answer, chunks=3, chunk_delay_s=0.01),), {}),
    "read timeout": ((Http(json=answer, delay_s=2.0),), {"timeout_s": 0.2}),
    "case deadline": ((Http(json=answer, delay_s=2.0),), {"case_timeout_s": 0.2}),
    "not JSON": ((Http(body="<html>oops</html>", content_type="text/html"),), {}),
    "404": ((Http(status=404, body="no such path"),), {}),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_the_loop_gives_the_threaded_rows(
    server: SearchServer, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    plan, kwargs = SCENARIOS[name]
    server.route("/search", *plan, per_case=True)
    looped, threaded = both_ways(monkeypatch, server.url("/search"), 12, **kwargs)
    assert rows(looped) == rows(threaded)
    assert [r.case_id for r in looped.per_query] == [c.id for c in golden(12)]


def test_a_refused_connection_reads_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens once it is closed
    looped, threaded = both_ways(monkeypatch, f"http://127.0.0.1:{port}/search", 3)
    assert rows(looped) == rows(threaded)
    assert all("is the service running" in (r.error or "") for r in looped.per_query)


@contextlib.contextmanager
def raw_server(reply: bytes) -> Iterator[str]:
    """Answers each request with ``reply`` verbatim, then closes the connection."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                with contextlib.suppress(OSError):
                    conn.sendall(reply)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/search"
    finally:
        stop.set()
        # close() alone does not wake a thread blocked in accept() on Linux (the
        # join then waited its whole 5 s); shutdown() does.
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join(5)
        assert not thread.is_alive()


PARTIAL = b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\nContent-Type: application/json\r\n\r\n{"resu'
CHUNKED = (
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n"
    b'5\r\n{"res\r\n1c\r\nults": [{"id": "doc-c000"}]}\r\n0\r\n\r\n'
)
UNTIL_CLOSE = b'HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{"results": [{"id": "doc-c000"}]}'
GARBAGE = b"SMTP ready\r\n\r\n"


@pytest.mark.parametrize(
    "reply", [PARTIAL, CHUNKED, UNTIL_CLOSE, GARBAGE], ids=["partial", "chunked", "eof", "garbage"]
)
def test_raw_replies_read_the_same(monkeypatch: pytest.MonkeyPatch, reply: bytes) -> None:
    with raw_server(reply) as url:
        looped, threaded = both_ways(monkeypatch, url, 3)
    assert rows(looped) == rows(threaded)
    if reply in (CHUNKED, UNTIL_CLOSE):
        assert all(r.error is None for r in looped.per_query)
    else:
        assert all(r.error for r in looped.per_query)


def test_many_connections_each_row_its_own(server: SearchServer) -> None:
    server.route("/search", Http(json=answer, delay_s=0.02))
    with make_target(server.url("/search")) as t:
        result = evaluate(t, golden(300), ["recall@1"], concurrency=64)
    assert result.mean("recall@1") == 1.0  # every row got its own case's answer
    assert server.max_in_flight <= 64


def test_the_cases_run_on_the_calling_thread(server: SearchServer) -> None:
    """No case thread: every row is scored on the thread that called evaluate."""
    server.route("/search", OK)
    seen: set[int] = set()

    def where(response: TargetResponse, case: GoldenCase) -> float:
        seen.add(threading.get_ident())
        return 1.0

    with isolated():
        register_metric("where", higher_is_better=True)(where)
        with make_target(server.url("/search")) as t:
            evaluate(t, golden(20), ["where"], concurrency=8)
    assert seen == {threading.get_ident()}


def test_connections_are_kept_for_the_next_run(server: SearchServer) -> None:
    server.route("/search", OK)
    with make_target(server.url("/search")) as t:
        evaluate(t, golden(16), ["recall@1"], concurrency=8)
        opened = t._wire.opened if t._wire is not None else -1
        evaluate(t, golden(16), ["recall@1"], concurrency=8)
        again = t._wire.opened if t._wire is not None else -1
        t.invoke(golden(1)[0])  # the blocking path takes one of them back
        last = t._wire.opened if t._wire is not None else -1
    assert 1 <= opened <= 8
    assert again == opened
    assert last == opened
