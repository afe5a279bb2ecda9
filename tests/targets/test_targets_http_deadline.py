"""Each HTTP attempt has a total deadline (``timeout_s``), not one per wait (#48).

A target that trickles its reply one byte every half second never trips a per-wait
timeout: with ``timeout_s: 3`` it held one case for 192 s.  Here a real loopback server
trickles the headers, or the body, and the case must fail in about its deadline, with
one line naming the case and the deadline.  The bounds are generous (10 s over the
deadline) and the run is watched from another thread, so a client that never gives up
fails the test instead of hanging it.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from evalkit._engine.execute import evaluate
from evalkit._model.results import CaseResult, RunResult
from evalkit.goldens import GoldenCase, GoldenSet
from evalkit.targets import HttpTarget
from evalkit.targets.http import MAX_ATTEMPTS
from evalkit.targets.http_deadline import DeadlineExceeded, attempt_deadline, check_deadline
from servers.raw import read_head
from servers.search import Reply, SearchServer

CASE = GoldenCase(id="slow-case", query="q", relevant=frozenset({"d1"}))
TIMEOUT_S = 1.0  # each attempt's deadline; the trickle's gaps (0.5 s) are shorter
TRICKLE_GAP_S = 0.5
SLACK_S = 10.0
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"


class Trickle:
    """Loopback HTTP/1.1: after each request, the reply one byte every ``TRICKLE_GAP_S``.

    ``phase="headers"`` trickles from the status line on; ``phase="body"`` sends the
    headers at once (promising 100,000 bytes) and trickles the body.  Counts requests
    and bytes sent; stopping wakes every handler at once.
    """

    def __init__(self, phase: str) -> None:
        self.phase = phase
        self.requests = 0
        self.sent = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._conns: list[socket.socket] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}/search"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = self._listener.accept()
                with self._lock:
                    self._conns.append(conn)
                threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            if read_head(conn) is None:
                return
            with self._lock:
                self.requests += 1
            reply = HEAD + b" " * 100_000
            if self.phase == "body":
                conn.sendall(HEAD)
                reply = reply[len(HEAD) :]
            for byte in reply:
                if self._stop.wait(TRICKLE_GAP_S):
                    return
                conn.sendall(bytes([byte]))
                with self._lock:
                    self.sent += 1

    def stop(self) -> None:
        self._stop.set()
        self._listener.close()
        with self._lock:
            for conn in self._conns:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)


@pytest.fixture(params=["headers", "body"])
def trickle(request: pytest.FixtureRequest) -> Iterator[Trickle]:
    server = Trickle(str(request.param))
    yield server
    server.stop()


def run_watched(target: HttpTarget, bound_s: float) -> tuple[RunResult[CaseResult], float]:
    """``evaluate`` on a thread; the run and its seconds, or a failure after ``bound_s``."""
    outcome: list[Any] = []

    def work() -> None:
        started = time.monotonic()
        try:
            outcome.append(evaluate(target, GoldenSet([CASE]), ["recall@1"]))
        except BaseException as exc:  # shown below
            outcome.append(exc)
        outcome.append(time.monotonic() - started)

    runner = threading.Thread(target=work, daemon=True)
    runner.start()
    runner.join(bound_s)
    if runner.is_alive():
        pytest.fail(f"the case was still running after {bound_s:g} s: no deadline held it")
    result, took = outcome
    if isinstance(result, BaseException):
        raise result
    return result, took


def deadline_of_case() -> float:
    return MAX_ATTEMPTS * TIMEOUT_S  # one retry, each attempt under its own deadline


@pytest.mark.parametrize("own_client", [False, True], ids=["its pool", "client="])
def test_a_trickling_reply_fails_the_case_in_about_its_deadline(
    trickle: Trickle, own_client: bool
) -> None:
    if own_client and trickle.phase == "headers":
        pytest.skip("a client= of yours keeps only its own per-wait timeouts for the headers")
    client = httpx.Client() if own_client else None
    with HttpTarget(
        trickle.url,
        "prod",
        lambda case: {"q": case.query},
        lambda body: [r["id"] for r in body["results"]],
        timeout_s=TIMEOUT_S,
        client=client,
    ) as target:
        result, took = run_watched(target, deadline_of_case() + SLACK_S)
    if client is not None:
        client.close()
    (row,) = result.per_query
    assert row.error is not None
    assert "\n" not in row.error
    assert row.error.startswith("target 'prod', case 'slow-case': "), row.error
    assert f"no complete reply within timeout_s={TIMEOUT_S:g} s" in row.error, row.error
    assert "failed after 2 attempt(s)" in row.error, row.error
    assert trickle.requests == MAX_ATTEMPTS
    assert trickle.sent >= 1, "the server never got to trickle: the test proved nothing"
    # Each attempt ran to its deadline (a causal bound: it cannot end sooner).
    assert deadline_of_case() <= took < deadline_of_case() + SLACK_S


def test_the_deadline_holds_only_inside_its_attempt() -> None:
    with attempt_deadline(0.0), pytest.raises(DeadlineExceeded, match="timeout_s=0 s"):
        check_deadline()  # already due
    check_deadline()  # gone with its attempt: nothing left behind on this thread


def test_prompt_replies_share_one_pooled_connection_under_the_deadline() -> None:
    with SearchServer() as server:
        url = server.route("/search", Reply(json={"results": [{"id": "d1"}]}))
        with HttpTarget(
            url,
            "prod",
            lambda case: {"q": case.query},
            lambda body: [r["id"] for r in body["results"]],
            timeout_s=TIMEOUT_S,
        ) as target:
            for _ in range(3):
                assert target.invoke(CASE).ranked_ids == ["d1"]
        assert server.connections_opened == 1


def test_a_proxy_from_the_environment_keeps_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    # The trickling server stands in for the proxy: httpx mounts a transport of its own
    # for it, which must be held to the deadline like the direct one.
    server = Trickle("headers")
    try:
        for name in ("ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy", "http_proxy"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTP_PROXY", server.url.removesuffix("/search"))
        with HttpTarget(
            "http://search.invalid/search",
            "prod",
            lambda case: {"q": case.query},
            lambda body: [r["id"] for r in body["results"]],
            timeout_s=TIMEOUT_S,
        ) as target:
            client = target._live_client()
            transports = [t for t in [client._transport, *client._mounts.values()] if t]
            assert len(transports) == 2  # its own and the proxy's
            result, took = run_watched(target, deadline_of_case() + SLACK_S)
    finally:
        server.stop()
    (row,) = result.per_query
    assert row.error is not None
    assert f"no complete reply within timeout_s={TIMEOUT_S:g} s" in row.error, row.error
    assert server.requests == MAX_ATTEMPTS
    assert deadline_of_case() <= took < deadline_of_case() + SLACK_S
