"""HttpTarget against a real HTTP server on 127.0.0.1 (and a few MockTransport unit tests)."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from evalkit._model.results import CaseResult
from evalkit.errors import InputError, TargetError
from evalkit.goldens import GoldenCase
from evalkit.targets import HttpTarget, Target, TargetResponse
from evalkit.targets.http import MAX_ATTEMPTS, run_attempts
from evalkit.targets.http_exchange import Attempt
from fakes import unused_port
from servers.raw import read_head
from servers.search import Drop, RecordedRequest, Reply, Reset, SearchServer

CASE = GoldenCase(id="q1", query="cheap flights", relevant=frozenset({"d1"}))
RESULTS = {"results": [{"id": "d1"}, {"id": "d2"}], "cost_usd": 0.002, "model": None}
OK = Reply(json=RESULTS)


def payload(case: GoldenCase) -> dict[str, Any]:
    return {"q": case.query, "id": case.id}


def ids(body: dict[str, Any]) -> list[str]:
    return [r["id"] for r in body["results"]]


@pytest.fixture
def server() -> Iterator[SearchServer]:
    with SearchServer() as running:
        yield running


def target(url: str, **kwargs: Any) -> HttpTarget:
    kwargs.setdefault("timeout_s", 2.0)
    kwargs.setdefault("build_payload", payload)
    kwargs.setdefault("extract", ids)
    return HttpTarget(url=url, name="prod", **kwargs)


def invoke(url: str, case: GoldenCase = CASE, **kwargs: Any) -> TargetResponse:
    with target(url, **kwargs) as t:
        return t.invoke(case)


def failure(url: str, **kwargs: Any) -> TargetError:
    with pytest.raises(TargetError) as info:
        invoke(url, **kwargs)
    message = str(info.value)
    assert message.startswith("target 'prod', case 'q1': "), message
    assert "\n" not in message
    return info.value


# -- a good answer ----------------------------------------------------------------


def test_posts_the_payload_as_json_and_extracts_ranked_ids(server: SearchServer) -> None:
    url = server.route("/search", OK)
    response = invoke(url)
    assert response.ranked_ids == ["d1", "d2"]
    assert response.raw == RESULTS
    [seen] = server.requests("/search")
    assert seen.method == "POST"
    assert seen.json == {"q": "cheap flights", "id": "q1"}
    assert seen.headers["content-type"] == "application/json"
    assert seen.headers["accept"] == "application/json"


def test_meta_keys_are_copied_and_a_missing_key_is_left_out(server: SearchServer) -> None:
    url = server.route("/search", OK)
    response = invoke(url, meta_keys=("cost_usd", "model", "not_in_body"))
    # "model" is null in the body, so it is None; "not_in_body" is absent, not None.
    assert response.meta == {"cost_usd": 0.002, "model": None}


def test_custom_headers_are_sent_and_override_the_defaults(server: SearchServer) -> None:
    url = server.route("/search", OK)
    invoke(url, headers={"Authorization": "Bearer s3cret", "Accept": "application/x-ndjson"})
    [seen] = server.requests("/search")
    assert seen.headers["authorization"] == "Bearer s3cret"
    assert seen.headers["accept"] == "application/x-ndjson"


def test_extract_may_return_text(server: SearchServer) -> None:
    url = server.route("/answer", Reply(json={"answer": "Take the train."}))
    with HttpTarget(url, "llm", payload, lambda body: body["answer"]) as t:
        response = t.invoke(CASE)
    assert response.text == "Take the train."
    assert not response.has_ids


def test_extract_may_return_a_response_and_still_gets_the_measured_latency(
    server: SearchServer,
) -> None:
    url = server.route("/rag", Reply(json={"ids": ["d1"], "answer": "yes", "cost_usd": 1.0}))

    def both(body: dict[str, Any]) -> TargetResponse:
        return TargetResponse(body["ids"], text=body["answer"], latency_ms=9999.0, meta={"n": 1})

    with HttpTarget(url, "rag", payload, both, meta_keys=("cost_usd",)) as t:
        response = t.invoke(CASE)
    assert response.ranked_ids == ["d1"]
    assert response.text == "yes"
    assert response.raw == {"ids": ["d1"], "answer": "yes", "cost_usd": 1.0}
    assert response.meta == {"cost_usd": 1.0, "n": 1}
    assert response.latency_ms < 9999.0  # the target measures latency, extract cannot


def test_a_custom_header_replaces_a_default_of_the_same_name(server: SearchServer) -> None:
    url = server.route("/search", OK)
    invoke(url, headers={"User-Agent": "probe/1", "Host": f"search.internal:{server.port}"})
    [seen] = server.requests("/search")
    assert seen.headers["user-agent"] == "probe/1"
    assert seen.headers["host"] == f"search.internal:{server.port}"


def test_get_sends_the_payload_as_query_parameters(server: SearchServer) -> None:
    url = server.route("/search", OK)
    invoke(url, method="get")
    [seen] = server.requests("/search")
    assert seen.method == "GET"
    assert seen.query == {"q": ["cheap flights"], "id": ["q1"]}
    assert seen.body == b""


def test_get_parameters_replace_the_urls_own_query(server: SearchServer) -> None:
    url = server.route("/search", OK)
    invoke(url + "?tenant=acme&q=old", method="GET", build_payload=lambda case: {"q": "new x"})
    [seen] = server.requests("/search")
    assert seen.query == {"q": ["new x"]}  # httpx's rule


def test_get_with_a_payload_that_is_not_a_mapping_is_refused_before_sending(
    server: SearchServer,
) -> None:
    url = server.route("/search", OK)
    message = str(failure(url, build_payload=lambda case: [case.query], method="GET"))
    assert "a GET sends build_payload's result as query parameters" in message
    assert "must be a mapping, got list" in message
    assert server.count() == 0


def test_the_response_is_a_target_and_welds_into_a_case_result(server: SearchServer) -> None:
    url = server.route("/search", OK)
    with target(url) as t:
        assert isinstance(t, Target)
        row = CaseResult(CASE.id, t.invoke(CASE), {"recall@1": 1.0})
    assert row.ok
    assert row.query_id == "q1"


# -- retries: exactly one, on 5xx or transport failure, never on 4xx ---------------------


def test_a_500_then_success_is_retried_once(server: SearchServer) -> None:
    url = server.route("/search", Reply(status=500, body="oops"), OK)
    assert invoke(url).ranked_ids == ["d1", "d2"]
    assert server.count("/search") == 2


def test_latency_spans_both_attempts(server: SearchServer) -> None:
    url = server.route(
        "/search", Reply(status=502, json={}, delay_s=0.05), Reply(json=RESULTS, delay_s=0.05)
    )
    start = time.perf_counter()
    response = invoke(url)
    elapsed_ms = (time.perf_counter() - start) * 1000
    assert 100.0 <= response.latency_ms <= elapsed_ms
    assert server.count("/search") == 2


def test_latency_includes_reading_a_slow_body(server: SearchServer) -> None:
    url = server.route("/search", Reply(json=RESULTS, chunks=3, chunk_delay_s=0.03))
    assert invoke(url).latency_ms >= 90.0


def test_503_twice_fails_after_exactly_two_requests(server: SearchServer) -> None:
    url = server.route("/search", Reply(status=503, body="overloaded,\n try later"))
    error = failure(url)
    assert server.count("/search") == 2
    message = str(error)
    assert f"POST {url} returned HTTP 503 after 2 attempt(s) (1 retry)" in message
    assert "attempt 1: HTTP 503 Service Unavailable: overloaded, try later" in message
    assert "attempt 2: HTTP 503" in message


@pytest.mark.parametrize("status", [400, 404, 422, 429])
def test_a_4xx_is_never_retried(server: SearchServer, status: int) -> None:
    url = server.route("/search", Reply(status=status, json={"error": "unknown index"}))
    message = str(failure(url))
    assert server.count("/search") == 1
    assert f"returned HTTP {status} " in message
    assert '{"error": "unknown index"}' in message
    assert "not retried" in message


def test_a_5xx_then_a_4xx_reports_both_attempts(server: SearchServer) -> None:
    url = server.route("/search", Reply(status=500), Reply(status=401, body="bad token"))
    message = str(failure(url))
    assert "attempt 1: HTTP 500" in message
    assert "attempt 2: HTTP 401 Unauthorized: bad token" in message
    assert server.count("/search") == 2


@pytest.mark.parametrize("hang_up", [Reset(), Drop()], ids=["reset", "drop"])
def test_a_connection_closed_without_answer_once_is_retried(
    server: SearchServer, hang_up: Reset | Drop
) -> None:
    url = server.route("/search", hang_up, OK)
    assert invoke(url).ranked_ids == ["d1", "d2"]
    assert server.count("/search") == 2


def test_connection_resets_on_both_attempts_fail_with_the_transport_error(
    server: SearchServer,
) -> None:
    url = server.route("/search", Reset())
    error = failure(url)
    assert server.count("/search") == 2
    assert "attempt 1: ReadError" in str(error)
    assert isinstance(error.__cause__, httpx.TransportError)


# The server never answers within the test: its handler sleeps until the server stops.
NEVER_S = 600.0


def test_a_timeout_is_retried_then_fails(server: SearchServer) -> None:
    url = server.route("/search", Reply(json=RESULTS, delay_s=NEVER_S))
    error = failure(url, timeout_s=0.5)
    assert server.count("/search") == 2
    message = str(error)
    assert "attempt 1: DeadlineExceeded: no complete reply within timeout_s=0.5 s" in message
    assert "attempt 2: DeadlineExceeded" in message
    assert "timeout_s=0.5 is each attempt's deadline" in message
    assert isinstance(error.__cause__, httpx.TimeoutException)


def test_a_timeout_then_an_answer_succeeds_and_counts_the_wait(server: SearchServer) -> None:
    # The answer is immediate: its 1 s deadline is hundreds of times a loopback reply.
    # The first attempt's deadline is what the latency must include.
    url = server.route("/search", Reply(json=RESULTS, delay_s=NEVER_S), OK)
    with target(url, timeout_s=1.0) as t:
        response = t.invoke(CASE)
    assert response.ranked_ids == ["d1", "d2"]
    assert response.latency_ms >= 1000.0
    assert server.count("/search") == 2


def test_an_unreachable_target_fails_loudly_after_one_retry() -> None:
    port = unused_port()  # held bound, never listening
    message = str(failure(f"http://127.0.0.1:{port}/search"))
    assert "attempt 1: ConnectError" in message
    assert "attempt 2: ConnectError" in message
    assert f"is the service running and reachable at http://127.0.0.1:{port}/search?" in message


def test_a_redirect_is_not_followed(server: SearchServer) -> None:
    url = server.route("/old", Reply(status=308, headers={"Location": "/search"}, body=""))
    message = str(failure(url))
    assert "returned HTTP 308" in message
    assert "point url at '/search'" in message
    assert server.count() == 1


# -- a 2xx that is not a usable answer: no retry, a clear error -------------------------


def test_a_body_that_is_not_json_is_refused(server: SearchServer) -> None:
    url = server.route(
        "/search", Reply(body="<html><body>Gateway login</body></html>", content_type="text/html")
    )
    message = str(failure(url))
    assert "HTTP 200 body is not valid JSON" in message
    assert "content-type text/html" in message
    assert "<html><body>Gateway login</body></html>" in message
    assert server.count() == 1


@pytest.mark.parametrize(
    ("body", "kind"),
    [([{"id": "d1"}], "array"), ("d1", "string"), (None, "null"), (3, "number")],
)
def test_a_json_body_that_is_not_an_object_is_refused(
    server: SearchServer, body: object, kind: str
) -> None:
    url = server.route("/search", Reply(json=body))
    assert f"(the body is a JSON {kind}; extract and meta_keys need a top-level object)" in str(
        failure(url)
    )


def test_nan_in_the_body_is_not_json(server: SearchServer) -> None:
    url = server.route("/search", Reply(body='{"results": [], "score": NaN}'))
    assert "NaN is not valid JSON" in str(failure(url))


def test_an_empty_body_is_refused(server: SearchServer) -> None:
    url = server.route("/search", Reply(status=204, body=b""))
    assert "HTTP 204 with an empty body" in str(failure(url))


def test_an_extract_that_raises_names_the_error_and_shows_the_body(server: SearchServer) -> None:
    url = server.route("/search", Reply(json={"hits": []}))
    error = failure(url)
    assert "extract() raised KeyError: 'results'; body: {\"hits\": []}" in str(error)
    assert isinstance(error.__cause__, KeyError)


def test_an_extract_returning_the_wrong_type_says_what_is_accepted(server: SearchServer) -> None:
    url = server.route("/search", OK)
    message = str(failure(url, extract=lambda body: body["results"]))
    assert "extract() returned a list whose item 0 is dict {'id': 'd1'}" in message


def test_an_extract_returning_none_is_refused(server: SearchServer) -> None:
    url = server.route("/search", OK)
    message = str(failure(url, extract=lambda _: None))
    assert "case 'q1': extract() returned None; return a list of ids" in message


# -- build_payload problems are found before anything is sent ---------------------------


@pytest.mark.parametrize(
    ("build", "expected"),
    [
        (lambda case: {"q": case.missing}, "build_payload() raised AttributeError"),
        (lambda case: {"q": {case.query}}, "not JSON: TypeError: Object of type set"),
        (lambda _: {"q": float("nan")}, "not JSON: ValueError: Out of range float"),
    ],
    ids=["raises", "set", "nan"],
)
def test_a_payload_that_cannot_be_sent_is_a_target_error(
    server: SearchServer, build: Any, expected: str
) -> None:
    url = server.route("/search", OK)
    assert expected in str(failure(url, build_payload=build))
    assert server.count() == 0


# -- the connection pool: ours is closed by us, yours is not ---------------------------


def test_the_with_block_closes_the_pool_and_later_invokes_refuse(server: SearchServer) -> None:
    url = server.route("/search", OK)
    with target(url) as t:
        t.invoke(CASE)
        own = t._client
        assert own is not None
        closed_inside = own.is_closed
    assert not closed_inside
    assert own.is_closed
    assert t.closed
    with pytest.raises(TargetError, match="target 'prod' is closed; create a new HttpTarget"):
        t.invoke(CASE)
    t.close()  # idempotent


def test_one_pooled_connection_serves_every_case(server: SearchServer) -> None:
    url = server.route("/search", OK)
    with target(url) as t:
        for n in range(5):
            t.invoke(GoldenCase(id=f"q{n}", query="x"))
    assert server.count() == 5
    assert len(server.counts_by_case()) == 5
    assert server.connections_opened == 1


def test_an_injected_client_is_used_and_never_closed(server: SearchServer) -> None:
    url = server.route("/search", OK)
    with httpx.Client(headers={"X-Tenant": "acme"}) as client:
        with target(url, client=client) as t:
            t.invoke(CASE)
        assert not client.is_closed
        assert client.post(url, json={}).status_code == 200  # still usable
    assert server.requests("/search")[0].headers["x-tenant"] == "acme"


def test_an_injected_client_that_was_closed_is_reported(server: SearchServer) -> None:
    url = server.route("/search", OK)
    client = httpx.Client()
    client.close()
    with pytest.raises(TargetError, match=r"the httpx\.Client passed as client= has been closed"):
        invoke(url, client=client)


def test_invokes_from_several_threads_share_the_target(server: SearchServer) -> None:
    url = server.route("/search", Reply(json=RESULTS, delay_s=0.05))
    results: list[TargetResponse] = []
    with target(url) as t:
        threads = [
            threading.Thread(target=lambda n=n: results.append(t.invoke(_case(n))))
            for n in range(6)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(results) == 6
    assert server.max_in_flight > 1  # not serialised behind one lock or connection


def _case(n: int) -> GoldenCase:
    return GoldenCase(id=f"q{n}", query=f"query {n}")


# -- secrets stay out of messages ----------------------------------------------------


def test_credentials_and_query_strings_never_appear_in_errors_or_repr(
    server: SearchServer,
) -> None:
    server.route("/search", Reply(status=404, body="nope"))
    url = f"http://user:pa55@127.0.0.1:{server.port}/search?api_key=SECRET"
    with pytest.raises(TargetError) as info:
        invoke(url, headers={"Authorization": "Bearer TOKEN"})
    shown = str(info.value) + repr(target(url))
    for secret in ("pa55", "SECRET", "TOKEN"):
        assert secret not in shown
    assert f"http://127.0.0.1:{server.port}/search" in shown


# -- constructor validation ---------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"url": "localhost:3001/api"}, "url must be an absolute http:// or https:// URL"),
        ({"url": "ftp://example.com/x"}, "url must be an absolute http:// or https:// URL"),
        ({"url": "http:///path-only"}, "url must be an absolute http:// or https:// URL"),
        ({"url": "http://example.com:99999/"}, "is malformed"),
        ({"url": 3001}, "url must be a string, got int"),
        ({"name": ""}, "HttpTarget name must be a non-empty string"),
        ({"timeout_s": 0}, "timeout_s must be a finite number of seconds > 0, got 0"),
        ({"timeout_s": -1.5}, "timeout_s must be a finite number of seconds > 0, got -1.5"),
        ({"timeout_s": float("inf")}, "got inf"),
        ({"timeout_s": float("nan")}, "got nan"),
        ({"timeout_s": True}, "got True"),
        ({"timeout_s": "5"}, "got '5'"),
        ({"method": "DELETE"}, "method must be one of GET, POST, PUT, PATCH, got 'DELETE'"),
        ({"meta_keys": "cost_usd"}, 'for one key write ("cost_usd",)'),
        ({"meta_keys": ("cost_usd", "")}, "meta_keys must be non-empty strings"),
        ({"headers": {"X-Key": 5}}, "header 'X-Key' must map a non-empty str name to a str value"),
        ({"headers": [("a", "b")]}, "headers must be a mapping"),
        ({"build_payload": {"q": 1}}, "build_payload must be callable, got dict"),
        ({"extract": "results[].id"}, "extract must be callable, got str"),
        ({"client": httpx.AsyncClient()}, "client must be an httpx.Client (synchronous)"),
    ],
)
def test_bad_constructor_arguments_are_refused(kwargs: dict[str, Any], expected: str) -> None:
    args: dict[str, Any] = {
        "url": "http://localhost:3001/api/search",
        "name": "prod",
        "build_payload": payload,
        "extract": ids,
        **kwargs,
    }
    with pytest.raises(InputError) as info:
        HttpTarget(**args)
    assert expected in str(info.value)


def test_the_spec_example_constructs_with_keywords() -> None:
    remote = HttpTarget(
        url="http://localhost:3001/api/search",
        name="prod",
        build_payload=lambda case: {"q": case.query},
        extract=lambda body: [r["id"] for r in body["results"]],
        meta_keys=("cost_usd", "my_custom_field"),
    )
    with remote:
        assert remote.timeout_s == 30.0
        assert remote.method == "POST"
        assert remote._client is None  # nothing is opened until the first invoke


# -- the retry rule as a unit (MockTransport / no network) ------------------------------


@pytest.mark.parametrize(
    ("attempt", "retryable"),
    [
        (Attempt(response=httpx.Response(500)), True),
        (Attempt(response=httpx.Response(503)), True),
        (Attempt(response=httpx.Response(599)), True),
        (Attempt(response=httpx.Response(200)), False),
        (Attempt(response=httpx.Response(404)), False),
        (Attempt(response=httpx.Response(429)), False),
        (Attempt(error=httpx.ConnectError("refused")), True),
        (Attempt(error=httpx.ReadTimeout("slow")), True),
        (Attempt(error=httpx.RemoteProtocolError("hung up")), True),
        (Attempt(error=httpx.DecodingError("bad gzip")), False),
    ],
)
def test_which_outcomes_are_retried(attempt: Attempt, retryable: bool) -> None:
    assert attempt.retryable is retryable


def test_run_attempts_stops_at_the_first_final_outcome_and_caps_at_two() -> None:
    outcomes = iter([Attempt(response=httpx.Response(503))] * 5)
    attempts, latency_ms = run_attempts(lambda: next(outcomes))
    assert len(attempts) == MAX_ATTEMPTS == 2
    assert latency_ms >= 0.0
    first_ok = iter([Attempt(response=httpx.Response(200)), Attempt(response=httpx.Response(500))])
    assert len(run_attempts(lambda: next(first_ok))[0]) == 1


def test_a_non_transport_httpx_error_is_not_retried() -> None:
    calls: list[httpx.Request] = []

    def corrupt_gzip(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(200, headers={"Content-Encoding": "gzip"}, content=b"not gzip")

    with httpx.Client(transport=httpx.MockTransport(corrupt_gzip)) as client:
        message = str(failure("http://search.test/api", client=client))
    assert len(calls) == 1
    assert "failed with an HTTP client error (not retried): DecodingError" in message


def test_the_request_carries_the_timeout_even_on_an_injected_client() -> None:
    seen: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=RESULTS)

    with httpx.Client(transport=httpx.MockTransport(record), timeout=99.0) as client:
        invoke("http://search.test/api", client=client, timeout_s=1.5)
    assert seen[0].extensions["timeout"] == httpx.Timeout(1.5).as_dict()
    assert json.loads(seen[0].content) == {"q": "cheap flights", "id": "q1"}


# -- the loopback server's own scripting (reused by the runner's tests) -----------------


def test_per_case_plans_restart_for_each_case(server: SearchServer) -> None:
    url = server.route("/search", Reply(status=503), OK, per_case=True)
    with target(url) as t:
        for n in range(3):
            assert t.invoke(_case(n)).ranked_ids == ["d1", "d2"]
    assert server.counts_by_case("/search") == {"q0": 2, "q1": 2, "q2": 2}


def test_replies_can_be_computed_from_the_request(server: SearchServer) -> None:
    def echo(request: RecordedRequest) -> dict[str, Any]:
        return {"results": [{"id": f"doc-{request.case_id}"}]}

    url = server.route("/search", Reply(json=echo, delay_s=(0.001, 0.003)))
    assert invoke(url).ranked_ids == ["doc-q1"]
    server.wait_idle()
    [seen] = server.requests(case="q1")
    assert seen.completed_at is not None
    assert seen.completed_at - seen.received_at >= 0.001


def test_an_unrouted_path_answers_404(server: SearchServer) -> None:
    assert "returned HTTP 404" in str(failure(server.url("/nowhere")))


# -- replies on the wire that the search server cannot script --------------------------


@contextlib.contextmanager
def raw_server(reply: bytes) -> Iterator[str]:
    """Answers each request with ``reply`` verbatim, then closes the connection."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = listener.accept()
                with conn:
                    if read_head(conn) is not None:
                        conn.sendall(reply)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/search"
    finally:
        # close() alone does not wake a thread blocked in accept() on Linux; shutdown() does.
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join(10)
        assert not thread.is_alive()


BODY = b'{"results": [{"id": "d1"}]}'
RAW_REPLIES = {
    "chunked": (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n"
        + b"%x\r\n%s\r\n0\r\n\r\n" % (len(BODY), BODY),
        None,
    ),
    "ends at close": (b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + BODY, None),
    "cut short": (
        b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + BODY[:6],
        "attempt 2: RemoteProtocolError",
    ),
    "not HTTP": (b"SMTP ready\r\n\r\n", "attempt 2: RemoteProtocolError"),
}


@pytest.mark.parametrize("name", list(RAW_REPLIES))
def test_raw_replies_are_read_or_refused_in_one_line(name: str) -> None:
    reply, error = RAW_REPLIES[name]
    with raw_server(reply) as url, target(url) as t:
        if error is None:
            assert t.invoke(CASE).ranked_ids == ["d1"]
        else:
            with pytest.raises(TargetError) as info:
                t.invoke(CASE)
            assert error in str(info.value)
            assert "\n" not in str(info.value)
