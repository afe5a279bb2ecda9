"""One HTTP exchange as HttpTarget sees it: the prepared request, an attempt, the capped body."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Final

import httpx

from evalkit._util.bounded import max_input_bytes
from evalkit._util.log import get_logger
from evalkit.targets._output import describe_exception, one_line
from evalkit.targets.http_deadline import check_deadline

MAX_RESPONSE_BYTES: Final = 64 * 1024 * 1024
_EXCERPT_CHARS: Final = 200


@dataclass(frozen=True)
class PreparedRequest:
    """Everything needed to send one case, built once and reused by the retry."""

    method: str
    url: str
    content: bytes | None
    params: dict[str, Any] | None
    headers: dict[str, str]
    timeout: httpx.Timeout


@dataclass(frozen=True)
class Attempt:
    """The outcome of one send: a response whose body has been read, or an httpx error."""

    response: httpx.Response | None = None
    error: httpx.HTTPError | None = None

    @property
    def retryable(self) -> bool:
        """A 5xx or a transport failure (refused, reset, timed out); never a 4xx."""
        if self.error is not None:
            return isinstance(self.error, httpx.TransportError)
        return self.response is not None and self.response.is_server_error

    def describe(self) -> str:
        """One line: ``HTTP 503 Service Unavailable: <body excerpt>`` or ``ReadTimeout: ...``."""
        if self.error is not None:
            return describe_exception(self.error)
        assert self.response is not None
        status = f"HTTP {self.response.status_code} {self.response.reason_phrase}".rstrip()
        excerpt = body_excerpt(self.response)
        return f"{status}: {excerpt}" if excerpt else status


_log = get_logger("evalkit.targets.http")


def log_retry(attempt: Attempt, failed: int, max_attempts: int) -> None:
    """INFO: a case's attempt failed and is sent again (the retry rule of :mod:`.http`)."""
    # describing the reply reads its body: only when it is shown
    if _log.isEnabledFor(logging.INFO):
        _log.info(
            "HTTP target: attempt %d of %d failed (%s); retrying",
            failed,
            max_attempts,
            attempt.describe(),
        )


class ResponseTooLarge(httpx.HTTPError):
    """The reply body is over :func:`max_response_bytes` (never retried)."""


def max_response_bytes() -> int:
    """The largest reply body read: 64 MiB, or less when the input limit is lower."""
    return min(MAX_RESPONSE_BYTES, max_input_bytes())


def read_capped(response: httpx.Response) -> None:
    """``response.read()`` that stops once the (decoded) body passes the cap or the deadline."""
    cap = max_response_bytes()
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise ResponseTooLarge(
            f"the reply declares {int(declared)} bytes, over the {cap} byte limit"
        )
    chunks: list[bytes] = []
    total = 0
    for chunk in response.iter_bytes():
        check_deadline()
        total += len(chunk)
        if total > cap:
            raise ResponseTooLarge(f"the reply body is over the {cap} byte limit")
        chunks.append(chunk)
    response._content = b"".join(chunks)  # what Response.read() stores


def body_excerpt(response: httpx.Response) -> str:
    from evalkit._util.visible import visible  # a body's ESC, BEL, NUL: spelled, not emitted

    text = response.content[: _EXCERPT_CHARS * 4].decode("utf-8", errors="replace")
    return one_line(visible(text), _EXCERPT_CHARS)
