"""HttpTarget: a service behind an HTTP JSON API as the system under test."""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar
from urllib.parse import urlsplit

import httpx

from evalkit._model.results import TargetResponse
from evalkit._util.bounded import loads
from evalkit._util.retry_after import WaitBudget, retry_after_seconds
from evalkit.errors import TargetConfigError, TargetError
from evalkit.targets._output import (
    TargetOutput,
    describe_exception,
    one_line,
    to_response,
    type_name,
)
from evalkit.targets.http_deadline import attempt_deadline, with_deadlines
from evalkit.targets.http_exchange import (
    Attempt,
    PreparedRequest,
    body_excerpt,
    log_retry,
    read_capped,
)

if TYPE_CHECKING:
    from evalkit._model.golden_cases import GoldenCase


MAX_ATTEMPTS: Final = 2
"""The first send and exactly one retry (the spec's rule)."""

DEFAULT_TIMEOUT_S: Final = 30.0
"""Each attempt's total deadline, connect to the last byte of the reply (``timeout_s``)."""
DEFAULT_KEEPALIVE: Final = 20  # httpx's own, until expect_concurrency sizes the pool
METHODS: Final = ("GET", "POST", "PUT", "PATCH")

BuildPayload = Callable[["GoldenCase"], Any]
_F = TypeVar("_F")
Extract = Callable[[dict[str, Any]], TargetOutput]


def send_once(client: httpx.Client, request: PreparedRequest, deadline_s: float) -> Attempt:
    """Send ``request`` and read the whole body (bounded), all within ``deadline_s``.

    An httpx failure (a deadline missed included) becomes an Attempt.
    """
    with attempt_deadline(deadline_s):
        try:
            built = client.build_request(
                request.method,
                request.url,
                content=request.content,
                params=request.params,
                headers=request.headers,
                timeout=request.timeout,
            )
            response = client.send(built, stream=True)
            try:
                read_capped(response)
            finally:
                response.close()
        except httpx.HTTPError as exc:
            return Attempt(error=exc)
    return Attempt(response=response)


def run_attempts(send: Callable[[], Attempt]) -> tuple[list[Attempt], float]:
    """Apply the retry rule around ``send``; return the attempts and the latency in ms."""
    attempts: list[Attempt] = []
    start = time.perf_counter()
    while True:
        attempt = send()
        attempts.append(attempt)
        if not attempt.retryable or len(attempts) >= MAX_ATTEMPTS:
            break
        log_retry(attempt, len(attempts), MAX_ATTEMPTS)
    return attempts, (time.perf_counter() - start) * 1000.0


# Lifted into ``meta`` when the body has them unless ``meta_keys=`` says otherwise:
# the fields paired-evalkit 0.2.0 lifted by default (cost_usd feeds cost aggregates).
DEFAULT_META_KEYS: tuple[str, ...] = (
    "cost_usd",
    "cache_hit",
    "cached",
    "model",
    "tier",
    "trace_id",
)


class HttpTarget:
    """A system under test reached over HTTP, answering JSON.

    For each case ``build_payload(case)`` is sent as a JSON body (with ``GET``:
    as query parameters), the reply must be a JSON object, and
    ``extract(body)`` turns it into a list of ids (best first), a ``str`` of
    text, or a :class:`TargetResponse`.  ``meta_keys`` (default
    :data:`DEFAULT_META_KEYS`, as in 0.2.0) names top-level keys
    of the body copied into ``response.meta`` (a key the body lacks is left out,
    not set to ``None``); ``raw`` is the parsed body.

    Exactly one retry on a 5xx or a transport failure, none on a 4xx; latency
    spans every attempt, as this client observed it.  The one opt-in exception:
    ``rate_limit_wait_s`` > 0 waits out a 429's ``Retry-After`` within that total
    budget (see :meth:`invoke`).  ``timeout_s`` is each attempt's total deadline,
    from connecting to the reply's last byte, so one case's sending takes at most
    :data:`MAX_ATTEMPTS` x ``timeout_s`` (a ``client=`` of yours: see
    :mod:`evalkit.targets.http_deadline`).  Anything that is not a usable answer
    raises a one-line :class:`TargetError` naming the target and the case.

    One pooled ``httpx.Client`` serves every call; it is created on first use
    and closed by :meth:`close` or the ``with`` block.  :meth:`expect_concurrency`
    (called by ``evaluate``) sizes it to keep one idle connection per slot.  A
    ``client=`` you pass in is used as is (its own headers, auth, limits) and
    never closed here.  Safe to invoke from several threads.
    """

    def __init__(
        self,
        url: str,
        name: str,
        build_payload: BuildPayload,
        extract: Extract,
        headers: Mapping[str, str] | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        client: httpx.Client | None = None,
        meta_keys: Sequence[str] = DEFAULT_META_KEYS,
        method: str = "POST",
        rate_limit_wait_s: float = 0.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not isinstance(name, str) or not name.strip():
            raise TargetConfigError(f"HttpTarget name must be a non-empty string, got {name!r}")
        self.name: str = name
        self.url: str = _checked_url(name, url)
        self.method: str = _checked_method(name, method)
        self.build_payload = _checked_callable(name, "build_payload", build_payload)
        self.extract = _checked_callable(name, "extract", extract)
        self.headers: dict[str, str] = _checked_headers(name, headers)
        self.timeout_s: float = _checked_timeout(name, timeout_s)
        self.meta_keys: tuple[str, ...] = _checked_meta_keys(name, meta_keys)
        if client is not None and not isinstance(client, httpx.Client):
            raise TargetConfigError(
                f"HttpTarget {name!r}: client must be an httpx.Client (synchronous), "
                f"got {type(client).__name__}"
            )
        try:
            self.rate_limit_budget = WaitBudget(rate_limit_wait_s, sleep=sleep, who="HTTP target")
        except ValueError as exc:
            raise TargetConfigError(f"HttpTarget {name!r}: rate_limit_wait_s: {exc}") from None
        self._client = client
        self._owns_client = client is None
        self._closed = False
        self._lock = threading.Lock()
        self._keepalive = 0  # idle connections the pool keeps (0: not built yet)
        self._retired: list[httpx.Client] = []  # outgrown pools, closed by close()

    # -- lifecycle ---------------------------------------------------------------

    def __enter__(self) -> HttpTarget:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool if this target created it.  Idempotent."""
        with self._lock:
            self._closed = True
            owned = [*self._retired, self._client]
            self._retired = []
        if self._owns_client:
            for old in owned:
                if old is not None:
                    old.close()

    def expect_concurrency(self, concurrency: int) -> None:
        """Keep ``concurrency`` idle connections, so every slot reuses its own.

        The connection count itself is left unbounded: the executor already caps
        requests in flight, and a second cap here could only make a case wait for
        a connection inside its measured latency (e.g. behind an abandoned,
        timed-out case still holding one).  A pool built smaller is replaced; the
        old one is closed with the target, never under a request in flight.
        No effect on a ``client=`` passed in.
        """
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise TargetConfigError(
                f"HttpTarget {self.name!r}: concurrency must be an integer >= 1, "
                f"got {concurrency!r}"
            )
        with self._lock:
            if not self._owns_client or self._closed or self._keepalive >= concurrency:
                return
            if self._client is not None:
                self._retired.append(self._client)
            # Built now, by the caller, rather than by the first cases: loading the CA
            # bundle takes tens of ms, and every case would queue behind it.
            self._client = self._new_client(concurrency)

    @property
    def closed(self) -> bool:
        return self._closed

    def _new_client(self, keepalive: int) -> httpx.Client:
        self._keepalive = keepalive
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=keepalive)
        client = httpx.Client(timeout=self.timeout_s, follow_redirects=False, limits=limits)
        return with_deadlines(client)

    def _live_client(self) -> httpx.Client:
        with self._lock:
            if self._closed:
                raise self._closed_error()
            if self._client is None:
                self._client = self._new_client(DEFAULT_KEEPALIVE)
            client = self._client
        if client.is_closed:
            raise TargetError(
                f"target {self.name!r}: the httpx.Client passed as client= has been closed"
            )
        return client

    # -- one case ----------------------------------------------------------------

    def invoke(self, case: GoldenCase) -> TargetResponse:
        """Send ``case``, retrying once on a 5xx or transport failure, and parse the answer.

        With ``rate_limit_wait_s`` > 0, a 429 whose ``Retry-After`` fits in what is
        left of that budget (a total for this target) is waited out and the case sent
        again; the latency is that of the final attempts, and the seconds waited go in
        ``meta["rate_limit_wait_s"]``.  By default a 429 fails like any other 4xx.
        """
        request = self.prepare(case)
        client = self._live_client()

        def send() -> Attempt:
            return send_once(client, request, self.timeout_s)

        waited = 0.0
        while True:
            attempts, latency_ms = run_attempts(send)
            wait = self._rate_limit_wait(attempts[-1])
            if wait is None:
                break
            waited += wait
        response = self.interpret(case, attempts, latency_ms)
        if waited:
            response.meta["rate_limit_wait_s"] = waited
        return response

    def _closed_error(self) -> TargetError:
        return TargetError(
            f"target {self.name!r} is closed; create a new HttpTarget "
            "(or invoke inside its with-block)"
        )

    def _rate_limit_wait(self, final: Attempt) -> float | None:
        """Seconds waited for a 429 to pass (already slept), or ``None`` to stop here."""
        response = final.response
        if not self.rate_limit_budget.enabled or response is None or response.status_code != 429:
            return None
        wait = retry_after_seconds(response.headers)
        if wait is None or not self.rate_limit_budget.wait(wait):
            return None
        return wait

    def prepare(self, case: GoldenCase) -> PreparedRequest:
        """Build the request for ``case`` (calls ``build_payload`` once; no I/O)."""
        who = self._who(case)
        try:
            payload = self.build_payload(case)
        except Exception as exc:
            raise TargetError(f"{who}: build_payload() raised {describe_exception(exc)}") from exc
        headers = {"accept": "application/json"}
        content: bytes | None = None
        params: dict[str, Any] | None = None
        if self.method == "GET":
            params = _query_params(who, payload)
        elif payload is not None:
            try:
                content = json.dumps(payload, allow_nan=False, separators=(",", ":")).encode()
            except (TypeError, ValueError) as exc:
                raise TargetError(
                    f"{who}: build_payload() returned a value that is not JSON: "
                    f"{describe_exception(exc)}"
                ) from exc
            headers["content-type"] = "application/json"
        headers.update(self.headers)
        return PreparedRequest(
            method=self.method,
            url=self.url,
            content=content,
            params=params,
            headers=headers,
            timeout=httpx.Timeout(self.timeout_s),
        )

    def interpret(
        self, case: GoldenCase, attempts: Sequence[Attempt], latency_ms: float
    ) -> TargetResponse:
        """Turn the final attempt into a response, or raise a :class:`TargetError`."""
        who = self._who(case)
        final = attempts[-1]
        if final.response is None or not final.response.is_success:
            raise TargetError(f"{who}: {self._failure(attempts)}") from final.error
        response = final.response
        body = _json_object(who, response)
        try:
            output = self.extract(body)
        except Exception as exc:
            raise TargetError(
                f"{who}: extract() raised {describe_exception(exc)}; body: {body_excerpt(response)}"
            ) from exc
        return to_response(
            output,
            culprit=f"{who}: extract()",
            latency_ms=latency_ms,
            # The contract is that HttpTarget measures latency; server-reported
            # timings belong in meta (meta_keys), not in place of the measurement.
            keep_reported_latency=False,
            raw=body,
            meta={key: body[key] for key in self.meta_keys if key in body},
        )

    def _who(self, case: GoldenCase) -> str:
        return f"target {self.name!r}, case {case.id!r}"

    def _failure(self, attempts: Sequence[Attempt]) -> str:
        where = f"{self.method} {_safe_url(self.url)}"
        final = attempts[-1]
        if len(attempts) > 1:
            steps = "; ".join(f"attempt {i}: {a.describe()}" for i, a in enumerate(attempts, 1))
            hint = self._hint(attempts)
            n = len(attempts)
            outcome = (
                f"returned HTTP {final.response.status_code} after {n} attempt(s)"
                if final.response is not None
                else f"failed after {n} attempt(s)"
            )
            return f"{where} {outcome} (1 retry): {steps}{hint}"
        if final.error is not None:
            # Only non-transport httpx errors (e.g. a corrupt Content-Encoding) end here.
            return f"{where} failed with an HTTP client error (not retried): {final.describe()}"
        assert final.response is not None
        status = final.response.status_code
        if status == 429:
            why = self._rate_limit_hint(final.response)
        elif final.response.is_client_error:
            why = "a 4xx means the request is wrong, so it is not retried"
        elif final.response.is_redirect:
            location = final.response.headers.get("location", "?")
            why = f"redirects are not followed; point url at {location!r}"
        else:
            why = f"only 2xx is an answer, got {status}"
        return f"{where} returned {final.describe()} ({why})"

    def _rate_limit_hint(self, response: httpx.Response) -> str:
        wait = retry_after_seconds(response.headers)
        budget = self.rate_limit_budget
        if wait is None:
            return "rate limited and not retried: no Retry-After to wait out"
        if not budget.enabled:
            return (
                f"rate limited for {wait:g} s, not retried: set rate_limit_wait_s to wait "
                "it out, or lower concurrency / rate_limit"
            )
        return (
            f"rate limited for {wait:g} s, more than the {budget.left_s:g} s left to wait: "
            "not retried"
        )

    def _hint(self, attempts: Sequence[Attempt]) -> str:
        errors = [a.error for a in attempts]
        if any(isinstance(e, httpx.ConnectError) for e in errors):
            return f" (is the service running and reachable at {_safe_url(self.url)}?)"
        if any(isinstance(e, httpx.TimeoutException) for e in errors):
            return (
                f" (timeout_s={self.timeout_s:g} is each attempt's deadline, from connecting "
                "to the reply's last byte; raise it?)"
            )
        return ""

    def __repr__(self) -> str:
        return f"HttpTarget(name={self.name!r}, {self.method} {_safe_url(self.url)})"


# -- helpers ----------------------------------------------------------------------


def _json_object(who: str, response: httpx.Response) -> dict[str, Any]:
    status = response.status_code
    content_type = response.headers.get("content-type", "none")
    if not response.content:
        raise TargetError(f"{who}: HTTP {status} with an empty body; expected a JSON object")
    try:
        body = loads(response.content, parse_constant=_reject_constant)
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, NaN/Infinity
        raise TargetError(
            f"{who}: HTTP {status} body is not valid JSON (a non-JSON body: "
            f"{one_line(str(exc), 80)}; content-type {content_type}): {body_excerpt(response)}"
        ) from exc
    if not isinstance(body, dict):
        raise TargetError(
            f"{who}: HTTP {status} returned a JSON {type_name(body)}, expected an object "
            f"(the body is a JSON {_json_kind(body)}; extract and meta_keys need a top-level "
            f"object): {body_excerpt(response)}"
        )
    return body


def _reject_constant(token: str) -> Any:
    # Python's json accepts NaN/Infinity; JSON does not, and a NaN score must never slip in.
    raise ValueError(f"{token} is not valid JSON")


def _json_kind(value: object) -> str:
    kinds = {list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if value is None else kinds.get(type(value), type_name(value))


def _query_params(who: str, payload: object) -> dict[str, Any] | None:
    if payload is None:
        return None
    if not isinstance(payload, Mapping):
        raise TargetError(
            f"{who}: a GET sends build_payload's result as query parameters, so it must be a "
            f"mapping, got {type_name(payload)}"
        )
    scalar = str | int | float | bool
    for key, value in payload.items():
        values = value if isinstance(value, list | tuple) else [value]
        if not isinstance(key, str) or not all(isinstance(v, scalar) for v in values):
            raise TargetError(
                f"{who}: query parameter {key!r} has a {type_name(value)} value; GET parameters "
                "must be str, int, float, bool or a list of those"
            )
    return dict(payload)


def _safe_url(url: str) -> str:
    """The url without credentials or query string, which may carry secrets."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port is not None else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def _checked_url(name: str, url: object) -> str:
    if not isinstance(url, str):
        raise TargetConfigError(f"HttpTarget {name!r}: url must be a string, got {type_name(url)}")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises ValueError on a malformed port)
    except ValueError as exc:
        raise TargetConfigError(f"HttpTarget {name!r}: url {url!r} is malformed ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TargetConfigError(
            f"HttpTarget {name!r}: url must be an absolute http:// or https:// URL, "
            f"got {url!r} (e.g. 'http://localhost:3001/api/search')"
        )
    return url


def _checked_method(name: str, method: object) -> str:
    normalised = method.upper() if isinstance(method, str) else method
    if normalised not in METHODS:
        raise TargetConfigError(
            f"HttpTarget {name!r}: method must be one of {', '.join(METHODS)}, got {method!r}"
        )
    assert isinstance(normalised, str)
    return normalised


def _checked_callable(name: str, what: str, fn: _F) -> _F:
    if not callable(fn):
        raise TargetConfigError(
            f"HttpTarget {name!r}: {what} must be callable, got {type_name(fn)}"
        )
    return fn


def _checked_headers(name: str, headers: Mapping[str, str] | None) -> dict[str, str]:
    if headers is None:
        return {}
    if not isinstance(headers, Mapping):
        raise TargetConfigError(
            f"HttpTarget {name!r}: headers must be a mapping of str to str, "
            f"got {type_name(headers)}"
        )
    for key, value in headers.items():
        if not isinstance(key, str) or not key or not isinstance(value, str):
            # The value is not shown: headers carry credentials.
            raise TargetConfigError(
                f"HttpTarget {name!r}: header {key!r} must map a non-empty str name to a str "
                f"value, got {type_name(value)}"
            )
    return dict(headers)


def _checked_timeout(name: str, timeout_s: object) -> float:
    if (
        isinstance(timeout_s, bool)
        or not isinstance(timeout_s, int | float)
        or not math.isfinite(timeout_s)
        or timeout_s <= 0
    ):
        raise TargetConfigError(
            f"HttpTarget {name!r}: timeout_s must be a finite number of seconds > 0, "
            f"got {timeout_s!r}"
        )
    return float(timeout_s)


def _checked_meta_keys(name: str, meta_keys: object) -> tuple[str, ...]:
    if isinstance(meta_keys, str) or not isinstance(meta_keys, Sequence | frozenset | set):
        raise TargetConfigError(
            f"HttpTarget {name!r}: meta_keys must be a tuple of key names, got {meta_keys!r} "
            '(for one key write ("cost_usd",))'
        )
    keys = tuple(meta_keys)
    bad = [k for k in keys if not isinstance(k, str) or not k]
    if bad:
        raise TargetConfigError(
            f"HttpTarget {name!r}: meta_keys must be non-empty strings, got {bad!r}"
        )
    return keys
