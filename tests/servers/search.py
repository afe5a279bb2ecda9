"""A real HTTP "search service" on 127.0.0.1, scripted per path, for tests and benchmarks.

Each path gets a *plan*: the steps the server takes for the 1st, 2nd, ... request
to it (the last step repeats).  A step is a :class:`Reply` (status, body,
latency, slow body), a :class:`Drop` (close the connection without answering) or
a :class:`Reset` (abort it with a TCP RST)::

    with SearchServer() as server:
        server.route("/flaky", Reply(status=503), Reply(json={"results": []}))
        url = server.url("/flaky")
        ...                                   # 1st request: 503, then 200 forever
        assert server.count("/flaky") == 2

With ``per_case=True`` the plan restarts for every case id (read from the JSON
body's or the query string's ``case_field``), so "503 on each case's first
attempt" holds under any concurrency.  Every request is recorded
(:class:`RecordedRequest`) with its arrival and completion times, and the
server tracks the peak number of requests in flight.  A request is recorded
before it is answered, so ``count()`` is exact once the client has its
response; completion times need ``wait_idle()`` first.

Sleeps wake as soon as the server stops, and stopping closes every open
connection, so a test that leaves a 10-second handler behind still ends at once.
"""

from __future__ import annotations

import contextlib
import json
import random
import socket
import struct
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = [
    "Drop",
    "RecordedRequest",
    "Reply",
    "Reset",
    "SearchServer",
    "Step",
]

Delay = float | tuple[float, float]
"""Seconds, fixed, or ``(low, high)`` drawn uniformly (seeded) per request."""

_UNSET: Any = object()


@dataclass(frozen=True)
class Reply:
    """Answer with ``status`` after ``delay_s``.

    The body is ``json`` (a value, or a function of the :class:`RecordedRequest`
    returning one) encoded as JSON, or ``body`` verbatim.  With ``chunks > 1``
    the headers go out at once and the body follows in ``chunks`` parts, each
    after ``chunk_delay_s``: a slow body.
    """

    status: int = 200
    json: Any = _UNSET
    body: bytes | str | None = None
    content_type: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: Delay = 0.0
    chunks: int = 1
    chunk_delay_s: float = 0.0

    def __post_init__(self) -> None:
        if self.json is not _UNSET and self.body is not None:
            raise ValueError("Reply takes json= or body=, not both")
        if self.chunks < 1:
            raise ValueError("chunks must be >= 1")

    def encode(self, request: RecordedRequest) -> tuple[bytes, str]:
        """The body bytes and their content type."""
        if self.body is not None:
            raw = self.body.encode() if isinstance(self.body, str) else self.body
            return raw, self.content_type or "text/plain; charset=utf-8"
        value = {} if self.json is _UNSET else self.json
        if callable(value):
            value = value(request)
        return json.dumps(value).encode(), self.content_type or "application/json"


@dataclass(frozen=True)
class Drop:
    """Read the request, then close the connection without a response (a FIN)."""

    delay_s: Delay = 0.0


@dataclass(frozen=True)
class Reset:
    """Read the request, then abort the connection (SO_LINGER 0: a TCP RST)."""

    delay_s: Delay = 0.0


Step = Reply | Drop | Reset


@dataclass
class RecordedRequest:
    """One request as the server saw it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # names lower-cased
    body: bytes
    json: Any  # the parsed body, or None when it is not JSON
    case_id: str | None
    received_at: float  # time.perf_counter() once the request was read
    step: Step | None = None
    completed_at: float | None = None  # when the reply was written (or the socket closed)


@dataclass
class _Route:
    plan: tuple[Step, ...]
    per_case: bool


class SearchServer:
    """A threaded HTTP/1.1 server on an ephemeral 127.0.0.1 port.

    Unrouted paths answer 404.  Thread-safe: routes may be changed while
    requests are in flight (a request uses the plan current when it arrived).
    """

    def __init__(self, *, case_field: str = "id", seed: int = 0) -> None:
        self.case_field = case_field
        self._routes: dict[str, _Route] = {}
        self._requests: list[RecordedRequest] = []
        self._seen: dict[tuple[str, str | None], int] = {}
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._random = random.Random(seed)
        self._in_flight = 0
        self._max_in_flight = 0
        self._stopping = threading.Event()
        self.errors: list[BaseException] = []
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------

    def start(self) -> SearchServer:
        if self._httpd is not None:
            raise RuntimeError("server already started")
        self._httpd = _HTTPServer(self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},
            name=f"search-server-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, wake sleeping handlers and close every open connection."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.close_connections()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> SearchServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- addresses ---------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "/search") -> str:
        return self.base_url + path

    # -- scripting ---------------------------------------------------------------

    def route(self, path: str, *plan: Step, per_case: bool = False) -> str:
        """Script ``path``; returns its full URL.  The last step repeats forever."""
        if not plan:
            raise ValueError("a route needs at least one step")
        if not path.startswith("/"):
            raise ValueError(f"path must start with '/', got {path!r}")
        with self._lock:
            self._routes[path] = _Route(plan=tuple(plan), per_case=per_case)
        return self.url(path)

    # -- observations ------------------------------------------------------------

    def requests(self, path: str | None = None, case: str | None = None) -> list[RecordedRequest]:
        """Recorded requests, in arrival order, optionally for one path and/or case id."""
        with self._lock:
            return [
                r
                for r in self._requests
                if (path is None or r.path == path) and (case is None or r.case_id == case)
            ]

    def count(self, path: str | None = None, case: str | None = None) -> int:
        return len(self.requests(path, case))

    def counts_by_case(self, path: str | None = None) -> dict[str | None, int]:
        """``{case_id: number of requests}`` (``None`` for requests without a case id)."""
        out: dict[str | None, int] = {}
        for r in self.requests(path):
            out[r.case_id] = out.get(r.case_id, 0) + 1
        return out

    @property
    def connections_opened(self) -> int:
        """TCP connections accepted so far: shows whether a client reuses its pool."""
        return 0 if self._httpd is None else self._httpd.connections_opened

    @property
    def in_flight(self) -> int:
        with self._lock:
            return self._in_flight

    @property
    def max_in_flight(self) -> int:
        """The most requests the server was handling at one moment."""
        with self._lock:
            return self._max_in_flight

    def wait_idle(self, timeout_s: float = 5.0) -> None:
        """Block until no request is being handled.

        A client holds its response a moment before the handler records
        ``completed_at``; wait here before reading completion times.
        """
        with self._lock:
            if not self._idle.wait_for(lambda: self._in_flight == 0, timeout=timeout_s):
                raise TimeoutError(f"{self._in_flight} request(s) still in flight")

    def clear(self) -> None:
        """Forget recorded requests, per-case progress through plans and the in-flight peak."""
        with self._lock:
            self._requests.clear()
            self._seen.clear()
            self._max_in_flight = self._in_flight

    # -- used by the handler -----------------------------------------------------

    def _admit(self, request: RecordedRequest) -> Step:
        """Record ``request`` and pick its step; counts it as in flight."""
        with self._lock:
            self._requests.append(request)
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
            route = self._routes.get(request.path)
            if route is None:
                step: Step = Reply(status=404, json={"error": f"no route {request.path}"})
            else:
                key = (request.path, request.case_id if route.per_case else None)
                nth = self._seen.get(key, 0)
                self._seen[key] = nth + 1
                step = route.plan[min(nth, len(route.plan) - 1)]
            request.step = step
            return step

    def _finish(self, request: RecordedRequest) -> None:
        with self._lock:
            request.completed_at = time.perf_counter()
            self._in_flight -= 1
            self._idle.notify_all()

    def _sleep(self, delay: Delay) -> bool:
        """Sleep ``delay``; False when the server began stopping meanwhile."""
        if isinstance(delay, tuple):
            with self._lock:
                seconds = self._random.uniform(*delay)
        else:
            seconds = delay
        if seconds <= 0:
            return not self._stopping.is_set()
        return not self._stopping.wait(seconds)

    def _case_id(self, query: dict[str, list[str]], parsed: Any) -> str | None:
        if isinstance(parsed, dict) and isinstance(parsed.get(self.case_field), str | int):
            return str(parsed[self.case_field])
        values = query.get(self.case_field)
        return values[0] if values else None


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 256  # benchmarks open dozens of connections at once

    def __init__(self, owner: SearchServer) -> None:
        self.owner = owner
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        self.connections_opened = 0
        super().__init__(("127.0.0.1", 0), _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
            self.connections_opened += 1
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        with self._connections_lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):  # already closed by its handler
                conn.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out and hung up makes the late reply fail with a
        # broken pipe: expected in timeout tests, so record rather than print.
        error = sys.exc_info()[1]
        if error is not None:
            self.owner.errors.append(error)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so clients really pool connections
    # Headers and body go out in separate writes; with Nagle on, the body waits
    # for the client's delayed ACK (~40 ms) and every latency reads high.
    disable_nagle_algorithm = True
    server: _HTTPServer

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_PATCH(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def _serve(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        if len(body) < length:
            # The client died mid-send (a SIGKILL'd run): no request arrived, so none is
            # recorded or answered, as a real server would drop it.
            self.close_connection = True
            return
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        try:
            parsed: Any = json.loads(body) if body else None
        except ValueError:
            parsed = None
        request = RecordedRequest(
            method=self.command,
            path=parts.path,
            query=query,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            json=parsed,
            case_id=owner._case_id(query, parsed),
            received_at=time.perf_counter(),
        )
        step = owner._admit(request)
        try:
            self._perform(step, request)
        finally:
            owner._finish(request)

    def _perform(self, step: Step, request: RecordedRequest) -> None:
        owner = self.server.owner
        if not owner._sleep(step.delay_s):
            self.close_connection = True
            return
        if isinstance(step, Drop):
            self.close_connection = True
            return
        if isinstance(step, Reset):
            self.close_connection = True
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            return
        payload, content_type = step.encode(request)
        self.send_response(step.status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in step.headers.items():
            self.send_header(name, value)
        self.end_headers()
        for piece in _split(payload, step.chunks):
            if step.chunks > 1:
                self.wfile.flush()
                if not owner._sleep(step.chunk_delay_s):
                    self.close_connection = True
                    return
            self.wfile.write(piece)
        self.wfile.flush()


def _split(payload: bytes, chunks: int) -> Iterator[bytes]:
    """Exactly ``chunks`` pieces (trailing ones may be empty, their delay still applies)."""
    size = max(1, -(-len(payload) // chunks))
    for index in range(chunks):
        yield payload[index * size : (index + 1) * size]
