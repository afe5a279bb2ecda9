"""HttpTarget's lean http:// path: the kernel's receive time ends the latency, not the read."""

from __future__ import annotations

import contextlib
import json
import random
import select
import socket
import string
import threading
import time
import warnings
from collections.abc import Iterator
from types import SimpleNamespace

import httpx
import pytest

import evalkit.targets.http as http
from evalkit._engine.client_load import ClientSaturationWarning
from evalkit.goldens import GoldenCase
from evalkit.targets import http_wire
from evalkit.targets.http import Attempt, HttpTarget, run_attempts
from evalkit.targets.http_wire import _Connection, wire_eligible
from servers.search import Reply, SearchServer

RESULTS = {"results": [{"id": "d1"}, {"id": "d2"}]}
# The kernel stamps packets with its own reading of the wall clock, and time.time()
# reads it through the vDSO: in a VM the two were seen ~40 us apart.  Bounds below
# allow that much, far less than the delays they are about.
CLOCK_SKEW_S = 0.001
CASE = GoldenCase(id="q1", query="x", relevant=frozenset({"d1"}))


@pytest.fixture
def server() -> Iterator[SearchServer]:
    with SearchServer() as running:
        yield running


def target_of(server: SearchServer) -> HttpTarget:
    return HttpTarget(
        url=server.url("/search"),
        name="prod",
        build_payload=lambda case: {"q": case.query},
        extract=lambda body: [r["id"] for r in body["results"]],
    )


def fake_time(monkeypatch: pytest.MonkeyPatch, wall: float, perf: list[float]) -> None:
    """run_attempts' clocks: time.time() reads ``wall``; perf_counter() reads ``perf`` in turn."""
    readings = iter(perf)
    clock = SimpleNamespace(time=lambda: wall, perf_counter=lambda: next(readings))
    monkeypatch.setattr(http, "time", clock)


@pytest.mark.parametrize(
    ("received_at", "latency_ms"),
    [
        (1000.020, 20.0),  # the kernel's receipt, 20 ms after the start: that is the latency
        (None, 1000.0),  # no kernel time: the caller's clock (1 s, reader's wake-up included)
        (999.0, 1000.0),  # before the start: the wall clock stepped, trust perf_counter
        (1002.0, 1000.0),  # after the reader saw it: impossible, trust perf_counter
    ],
)
def test_the_latency_ends_when_the_kernel_received_the_reply(
    monkeypatch: pytest.MonkeyPatch, received_at: float | None, latency_ms: float
) -> None:
    fake_time(monkeypatch, wall=1000.0, perf=[5.0, 6.0])
    attempt = Attempt(response=httpx.Response(200), received_at=received_at)
    _, measured = run_attempts(lambda: attempt)
    assert measured == pytest.approx(latency_ms)


def test_the_latency_starts_when_the_request_began_sending(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Handed a connection 5 ms after the call began (the pool, the interpreter lock):
    # that is the client's time, not the target's.
    fake_time(monkeypatch, wall=1000.0, perf=[0.0, 1.0])
    attempt = Attempt(response=httpx.Response(200), started_at=1000.005, received_at=1000.025)
    _, measured = run_attempts(lambda: attempt)
    assert measured == pytest.approx(20.0)


def test_a_retried_case_runs_from_the_first_send_to_the_final_receipt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_time(monkeypatch, wall=1000.0, perf=[0.0, 1.0])
    outcomes = iter(
        [
            Attempt(response=httpx.Response(503), started_at=1000.002, received_at=1000.010),
            Attempt(response=httpx.Response(200), started_at=1000.011, received_at=1000.055),
        ]
    )
    attempts, measured = run_attempts(lambda: next(outcomes))
    assert len(attempts) == 2
    assert measured == pytest.approx(53.0)  # the first send to the final receipt


class OneWriteServer:
    """Loopback HTTP/1.1 (keep-alive, GET) answering each request in one write after ``delay_s``.

    One write, so once the client's socket is readable the whole reply is in its
    kernel buffer: "arrived by" is then exact, whatever the machine's load.
    """

    def __init__(self, delay_s: float = 0.0) -> None:
        self.delay_s = delay_s
        body = json.dumps(RESULTS).encode()
        self.reply = (
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
            + f"content-length: {len(body)}\r\n\r\n".encode()
            + body
        )
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = self.listener.accept()
                threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            pending = b""
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                pending += data
                while b"\r\n\r\n" in pending:
                    _, pending = pending.split(b"\r\n\r\n", 1)
                    time.sleep(self.delay_s)
                    conn.sendall(self.reply)

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def one_write() -> Iterator[OneWriteServer]:
    server = OneWriteServer(delay_s=0.02)
    yield server
    server.close()


def ask(conn: _Connection) -> tuple[bytes, float | None]:
    conn.sock.sendall(b"GET /search HTTP/1.1\r\nHost: x\r\n\r\n")
    readable, _, _ = select.select([conn.sock], [], [], 5.0)
    assert readable
    return conn.recv()


@pytest.fixture
def stamping(one_write: OneWriteServer) -> Iterator[None]:
    """Kernel receive timestamps switched on, and kept on for the test.

    The kernel turns packet timestamping on shortly *after* the first socket asks
    (deferred work), so a new process's first replies may carry none.  One open
    stamped socket keeps it on.
    """
    keeper = _Connection("127.0.0.1", one_write.port, 5.0)
    try:
        if not keeper.stamped:
            pytest.skip("this platform gives no SO_TIMESTAMPNS receive times")
        for _ in range(200):
            if ask(keeper)[1] is not None:
                break
            time.sleep(0.01)
        else:
            pytest.skip("this kernel never stamped a received packet")
        yield
    finally:
        keeper.close()


@pytest.mark.usefixtures("stamping")
def test_the_kernel_time_is_when_the_bytes_arrived_not_when_they_were_read(
    one_write: OneWriteServer,
) -> None:
    conn = _Connection("127.0.0.1", one_write.port, 5.0)
    try:
        sent = time.time()
        conn.sock.sendall(b"GET /search HTTP/1.1\r\nHost: x\r\n\r\n")
        readable, _, _ = select.select([conn.sock], [], [], 5.0)
        assert readable
        arrived_by = time.time()  # the whole reply (one write) is in the kernel's buffer
        time.sleep(0.05)  # a client busy with other cases reads it late
        data, stamp = conn.recv()
    finally:
        conn.close()
    assert data.startswith(b"HTTP/1.1 200")
    assert stamp is not None
    assert sent - CLOCK_SKEW_S <= stamp <= arrived_by + CLOCK_SKEW_S


@pytest.mark.usefixtures("stamping")
def test_an_invoke_read_late_reports_the_arrival(
    one_write: OneWriteServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every read waits until the reply is there, then dawdles 50 ms before taking it.
    real_recv = _Connection.recv

    def late_recv(self: _Connection) -> tuple[bytes, float | None]:
        select.select([self.sock], [], [], 5.0)
        time.sleep(0.05)
        return real_recv(self)

    monkeypatch.setattr(_Connection, "recv", late_recv)
    with HttpTarget(
        url=f"http://127.0.0.1:{one_write.port}/search",
        name="prod",
        method="GET",
        build_payload=lambda case: {"q": case.query},
        extract=lambda body: [r["id"] for r in body["results"]],
    ) as target:
        started = time.perf_counter()
        response = target.invoke(CASE)
        took_ms = (time.perf_counter() - started) * 1000
    assert response.ranked_ids == ["d1", "d2"]
    skew_ms = CLOCK_SKEW_S * 1000
    assert response.latency_ms >= 20.0 - skew_ms  # the server's own delay is inside it
    assert response.latency_ms <= took_ms - 50.0 + skew_ms  # the late read is not


@pytest.mark.parametrize(
    ("url", "client", "env", "lean"),
    [
        ("http://127.0.0.1:8080/search", False, {}, True),
        ("https://example.invalid/search", False, {}, False),
        ("http://user:secret@127.0.0.1/search", False, {}, False),
        ("http://127.0.0.1/search", True, {}, False),
        ("http://api.internal/search", False, {"http_proxy": "http://proxy:3128"}, False),
        (
            "http://api.internal/search",
            False,
            {"http_proxy": "http://proxy:3128", "no_proxy": "api.internal"},
            True,
        ),
    ],
)
def test_the_lean_path_is_taken_only_where_it_sends_what_httpx_would(
    monkeypatch: pytest.MonkeyPatch, url: str, client: bool, env: dict[str, str], lean: bool
) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert wire_eligible(url, client) is lean


def test_a_stale_keepalive_connection_is_replaced_not_failed(server: SearchServer) -> None:
    server.route("/search", Reply(json=RESULTS))
    with target_of(server) as target:
        target.invoke(CASE)
        assert target._wire is not None
        (idle,) = target._wire._idle
        idle.sock.shutdown(socket.SHUT_RDWR)  # as if the server had closed it meanwhile
        assert target.invoke(CASE).ranked_ids == ["d1", "d2"]
    assert server.count("/search") == 2  # replaced before sending, so no retry was spent


def test_the_cli_shows_a_saturation_warning_as_one_evalkit_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from evalkit.cli import session as cli

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        cli._show_run_warnings()
        warnings.warn(
            ClientSaturationWarning("the client's own CPU limited this run"), stacklevel=1
        )
    assert capsys.readouterr().err == "evalkit: warning: the client's own CPU limited this run\n"


def test_closing_the_target_wakes_a_call_still_waiting_for_its_reply(
    server: SearchServer,
) -> None:
    server.route("/search", Reply(json=RESULTS, delay_s=30.0))
    target = target_of(server)
    outcome: list[BaseException | object] = []

    def call() -> None:
        try:
            outcome.append(target.invoke(CASE))
        except BaseException as exc:  # the TargetError this test expects
            outcome.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    deadline = time.monotonic() + 10
    while server.count("/search") == 0 and time.monotonic() < deadline:
        time.sleep(0.01)  # until the request is in the server, waiting
    target.close()
    caller.join(10)  # far less than the server's 30 s or the target's 30 s timeout
    assert not caller.is_alive()
    (error,) = outcome
    assert isinstance(error, Exception)
    assert "target 'prod', case 'q1'" in str(error)


def test_expecting_a_run_holds_timestamps_on_until_the_target_closes(
    server: SearchServer,
) -> None:
    target = target_of(server)

    def keeper_of(t: HttpTarget) -> socket.socket | None:
        assert t._wire is not None
        return t._wire._keeper

    assert keeper_of(target) is None  # nothing is opened before a run is expected
    target.expect_concurrency(8)
    keeper = keeper_of(target)
    if keeper is None:
        pytest.skip("this platform gives no SO_TIMESTAMPNS receive times")
    assert keeper.getsockopt(socket.SOL_SOCKET, http_wire.SO_TIMESTAMPNS or 0) == 1
    target.close()
    assert keeper.fileno() == -1
    assert keeper_of(target) is None


def _random_params(rnd: random.Random) -> dict[str, object]:
    alphabet = string.printable + "é☃/?&=#%+ "

    def text(most: int) -> str:
        return "".join(rnd.choice(alphabet) for _ in range(rnd.randrange(most)))

    def value() -> object:
        kind = rnd.randrange(6)
        if kind == 0:
            return rnd.randrange(-1000, 1000)
        if kind == 1:
            return rnd.random() * 10 ** rnd.randrange(-5, 20)
        if kind == 2:
            return rnd.choice([True, False])
        if kind == 3:
            return [text(5) for _ in range(rnd.randrange(3))]  # [] encodes to nothing
        if kind == 4:
            return tuple(rnd.choice([1, 2.5, "a b", False]) for _ in range(rnd.randrange(3)))
        return text(8)

    return {text(5) or "k": value() for _ in range(rnd.randrange(4))}


@pytest.mark.parametrize(
    "url",
    [
        "http://h/search",
        "http://h/se%20arch?x=1",
        "http://h",
        "http://h:81/a/b?c=d#frag",
        "http://h/p;q",
        "http://h/a?",
        "http://h/ä ö",
    ],
)
def test_the_request_target_is_what_httpx_would_send(url: str) -> None:
    pool = http_wire.WirePool(url, 1.0)
    rnd = random.Random(url)
    for _ in range(2000):
        params = _random_params(rnd)
        parsed = httpx.URL(url)
        want = parsed.copy_with(params=params).raw_path if params else parsed.raw_path
        assert pool.request_target(params) == want, params
    assert pool.request_target(None) == httpx.URL(url).raw_path
