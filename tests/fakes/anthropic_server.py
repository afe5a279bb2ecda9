"""A loopback HTTP server that speaks enough of the Anthropic Messages API to test a judge.

It is a real server on 127.0.0.1 (threaded, HTTP/1.1 keep-alive), so tests drive the real
``anthropic.Anthropic`` client against it through ``base_url``.  Replies are scripted per
request, in order; when the script runs out the server answers with ``default`` (a valid
grade) or with whatever ``responder`` computes from the request.  Every request is recorded
(headers and JSON body) so tests can assert what the client actually sent.

    with FakeAnthropic() as api:
        api.script(grade(4, "close"), error(529, "overloaded_error"))
        client = api.client()                # max_retries=0, api_key="test"
"""

from __future__ import annotations

import itertools
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Self

if TYPE_CHECKING:
    import anthropic

JsonObj = dict[str, Any]

_ids = itertools.count(1)
_ids_lock = threading.Lock()


def _next_id() -> int:
    with _ids_lock:
        return next(_ids)


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: JsonObj | None
    raw: bytes
    query: str = ""

    @property
    def tools(self) -> list[JsonObj]:
        return list((self.body or {}).get("tools", []))

    @property
    def prompt(self) -> str:
        """The text of the first user message (what the judge was shown)."""
        messages = (self.body or {}).get("messages", [])
        content = messages[0]["content"] if messages else ""
        if isinstance(content, str):
            return content
        return "".join(part.get("text", "") for part in content)


@dataclass(frozen=True)
class Reply:
    """How to answer one request: ``render(request_body) -> (status, headers, body)``."""

    render: Callable[[JsonObj], tuple[int, dict[str, str], bytes]]
    delay_s: float = 0.0

    def after(self, delay_s: float) -> Reply:
        """The same reply, sent after ``delay_s`` seconds (for concurrency tests)."""
        return Reply(self.render, delay_s)


def _json(
    status: int, obj: object, headers: Mapping[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    return (
        status,
        {"content-type": "application/json", **(headers or {})},
        json.dumps(obj).encode(),
    )


def message(
    content: list[JsonObj],
    *,
    stop_reason: str = "tool_use",
    input_tokens: int = 120,
    output_tokens: int = 30,
    usage: bool = True,
) -> Reply:
    """A 200 Messages API reply with the given content blocks."""

    def render(request: JsonObj) -> tuple[int, dict[str, str], bytes]:
        body: JsonObj = {
            "id": f"msg_fake_{_next_id()}",
            "type": "message",
            "role": "assistant",
            "model": request.get("model", "unknown"),
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
        }
        if usage:
            body["usage"] = {"input_tokens": input_tokens, "output_tokens": output_tokens}
        return _json(200, body, {"request-id": f"req_fake_{_next_id()}"})

    return Reply(render)


def tool_call(
    tool_input: object,
    *,
    name: str = "record_grade",
    input_tokens: int = 120,
    output_tokens: int = 30,
    usage: bool = True,
) -> Reply:
    """A reply whose only content block is a ``tool_use`` with this (unvalidated) input."""
    block = {
        "type": "tool_use",
        "id": f"toolu_fake_{_next_id()}",
        "name": name,
        "input": tool_input,
    }
    return message([block], input_tokens=input_tokens, output_tokens=output_tokens, usage=usage)


def grade(score: int, reason: str = "scored by the fake", **kwargs: Any) -> Reply:
    """A well-formed ``record_grade`` call."""
    return tool_call({"score": score, "reason": reason}, **kwargs)


def text_only(text: str = "I think this deserves a 4.") -> Reply:
    """A reply with no tool call at all, only text (what a forced tool call should prevent)."""
    return message([{"type": "text", "text": text}], stop_reason="end_turn")


def error(
    status: int,
    error_type: str,
    message_text: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> Reply:
    """An API error with the Messages API's JSON error body, e.g. 529 ``overloaded_error``.

    ``headers`` replace the default ``retry-after-ms: 1`` (e.g. a 429's ``retry-after``).
    """
    body = {
        "type": "error",
        "error": {"type": error_type, "message": message_text or f"{error_type} (fake)"},
    }
    # retry-after-ms keeps SDK retries (when a test enables them) from sleeping.
    sent = {"retry-after-ms": "1"} if headers is None else dict(headers)
    sent["request-id"] = f"req_fake_{_next_id()}"
    return Reply(lambda _request: _json(status, body, sent))


def overloaded() -> Reply:
    return error(529, "overloaded_error", "Overloaded")


def api_error() -> Reply:
    return error(500, "api_error", "Internal server error")


def malformed(
    body: bytes = b'{"id": "msg_1", "content": [', content_type: str = "application/json"
) -> Reply:
    """A 200 whose body is not the JSON it claims to be."""
    return Reply(lambda _request: (200, {"content-type": content_type}, body))


def _error_response(status: int, error_type: str, text: str) -> tuple[int, dict[str, str], bytes]:
    return _json(status, {"type": "error", "error": {"type": error_type, "message": text}})


def _refuse(request: RecordedRequest) -> tuple[int, dict[str, str], bytes] | None:
    """What the real API would say to a request it cannot serve, if anything."""
    if request.path != "/v1/messages":
        return _error_response(404, "not_found_error", f"no route {request.path}")
    if not (request.headers.get("x-api-key") or request.headers.get("authorization")):
        return _error_response(401, "authentication_error", "an API key is required")
    if request.body is None:
        return _error_response(400, "invalid_request_error", "body must be a JSON object")
    return None


@dataclass
class _State:
    script: deque[Reply] = field(default_factory=deque)
    requests: list[RecordedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    in_flight: int = 0
    peak: int = 0


class FakeAnthropic:
    """The server.  Use as a context manager (or call :meth:`start` / :meth:`close`)."""

    def __init__(
        self,
        *,
        default: Reply | None = None,
        responder: Callable[[JsonObj], Reply] | None = None,
        accepted_key: str | None = None,
    ) -> None:
        self.default = default or grade(4, "good enough")
        self.responder = responder
        # When set, any other key is refused with 401 (as the real API does).
        self.accepted_key = accepted_key
        self._state = _State()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        # A short poll interval makes shutdown (every test's teardown) near-instant.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._started = False

    # lifecycle -------------------------------------------------------------------------

    def start(self) -> Self:
        if not self._started:
            self._thread.start()
            self._started = True
        return self

    def close(self) -> None:
        if self._started:
            self._server.shutdown()
            self._thread.join(timeout=5)
        self._server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # scripting and inspection ----------------------------------------------------------

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def script(self, *replies: Reply) -> None:
        """Queue replies for the next requests, in order."""
        with self._state.lock:
            self._state.script.extend(replies)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._state.lock:
            return list(self._state.requests)

    @property
    def message_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == "/v1/messages"]

    def client(self, **kwargs: Any) -> anthropic.Anthropic:
        """A real SDK client pointed here, retries off unless asked for."""
        import anthropic

        options: dict[str, Any] = {"api_key": "test", "max_retries": 0, "timeout": 10.0}
        options.update(kwargs)
        return anthropic.Anthropic(base_url=self.base_url, **options)

    @property
    def max_in_flight(self) -> int:
        """The most requests the server was handling at once (for concurrency tests)."""
        with self._state.lock:
            return self._state.peak

    # the handler -------------------------------------------------------------------------

    def _key_ok(self, headers: Mapping[str, str]) -> bool:
        if self.accepted_key is None:
            return True
        sent = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        return sent == self.accepted_key

    def answer_get(
        self, path: str, headers: Mapping[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        """A GET (a subclass's protocol hook): here the pre-flight's model lookup."""
        if not path.startswith("/v1/models/"):
            return _error_response(404, "not_found_error", f"no route {path}")
        if not self._key_ok(headers):
            return _error_response(401, "authentication_error", "invalid x-api-key")
        model = path.removeprefix("/v1/models/")
        body = {
            "type": "model",
            "id": model,
            "display_name": model,
            "created_at": "2025-01-01T00:00:00Z",
        }
        return _json(200, body)

    def refuse(self, request: RecordedRequest) -> tuple[int, dict[str, str], bytes] | None:
        """What the real API says to a request it cannot serve (a subclass's protocol hook)."""
        return _refuse(request)

    def _next_reply(self, request: JsonObj) -> Reply:
        with self._state.lock:
            if self._state.script:
                return self._state.script.popleft()
        if self.responder is not None:
            return self.responder(request)
        return self.default

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return  # keep test output clean

            def _send(self, status: int, headers: Mapping[str, str], body: bytes) -> None:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                recorded = RecordedRequest(
                    method="POST",
                    path=self.path.split("?", 1)[0],
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body if isinstance(body, dict) else None,
                    raw=raw,
                    query=self.path.partition("?")[2],
                )
                with fake._state.lock:
                    fake._state.requests.append(recorded)
                    fake._state.in_flight += 1
                    fake._state.peak = max(fake._state.peak, fake._state.in_flight)
                try:
                    self._answer(recorded)
                finally:
                    with fake._state.lock:
                        fake._state.in_flight -= 1

            def _answer(self, recorded: RecordedRequest) -> None:
                refusal = fake.refuse(recorded)
                if refusal is None and not fake._key_ok(recorded.headers):
                    refusal = _error_response(401, "authentication_error", "invalid x-api-key")
                if refusal is not None:
                    self._send(*refusal)
                    return
                assert recorded.body is not None
                reply = fake._next_reply(recorded.body)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                self._send(*reply.render(recorded.body))

            def do_GET(self) -> None:
                """``GET /v1/models/{id}``: the free lookup a judge's pre-flight makes."""
                path = self.path.split("?", 1)[0]
                headers = {k.lower(): v for k, v in self.headers.items()}
                recorded = RecordedRequest("GET", path, headers, None, b"")
                with fake._state.lock:
                    fake._state.requests.append(recorded)
                self._send(*fake.answer_get(path, headers))

        return Handler


_held: list[socket.socket] = []  # bound for the life of the process, never listening


def unused_port() -> int:
    """A loopback port with nothing listening (for connection-refused tests).

    The port stays bound, without listening, until the process ends: a connection to it is
    refused, and no other test or pytest-xdist worker can be given it meanwhile.
    """
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    _held.append(sock)
    port: int = sock.getsockname()[1]
    return port
