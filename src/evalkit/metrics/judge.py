"""LLM-as-judge: a per-case metric that asks a Claude model to grade a response."""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any, Unpack

from evalkit.errors import ConfigError, JudgeError
from evalkit.metrics.judge_base import (
    PROBE_TIMEOUT_S,
    SYSTEM_PROMPT,
    TOOL_NAME,
    JudgeBase,
    JudgeSettings,
    Reply,
    ToolCall,
    _one_line,
)

__all__ = ["LLMJudge", "TOOL_NAME"]

if TYPE_CHECKING:
    import anthropic

    from evalkit._model.golden_cases import GoldenCase
    from evalkit._model.results import TargetResponse

DEFAULT_MAX_RETRIES = 2  # only for the client LLMJudge builds itself
# The SDK waits up to 600 s per request; a grade that takes two minutes is not coming.
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_CONNECT_TIMEOUT_S = 10.0
PROBE_RETRIES = 1  # the pre-flight probe: one retry, short waits
API_KEY_ENV = "ANTHROPIC_API_KEY"


class LLMJudge(JudgeBase):
    """A per-case metric ``judge(response, case) -> float`` graded by a Claude model.

    :param rubric: what a good response is; shown to the model verbatim.
    :param model: the judge model, e.g. ``"claude-haiku-4-5"``; required, no default.
    :param scale: scores are integers ``1..scale`` (``scale >= 2``).
    :param cache_path: JSON file of grades already paid for (shared safely by threads
        and processes); ``None`` disables caching.
    :param client: an ``anthropic.Anthropic``; by default one is built on first use
        (reading ``ANTHROPIC_API_KEY``).
    :param temperature: sampling temperature, sent only when given; ``None`` (the
        default) leaves it to the API, since recent models accept only their default.
    :param max_retries: SDK retries on 429/5xx/connection errors.  ``None`` keeps an
        injected client's own setting and gives a built client
        ``DEFAULT_MAX_RETRIES``.
    :param timeout_s: per-request timeout; ``None`` keeps the client's.
    :param prices: ``{"input": usd, "output": usd}`` per million tokens, to record cost.
    :param cache_only: replay from the cache only; a miss raises instead of calling the
        API (CI without spending).
    :param system: extra instructions for the grader (0.2.0's ``system``), sent after
        the built-in system prompt; part of the fingerprint and the cache key.
    :param rate_limit_wait_s: total seconds this judge may spend waiting out 429
        replies that say how long to wait (``retry-after`` / ``retry-after-ms``),
        across all threads (default 0: off).  The SDK's own ``max_retries`` come first.
    :param sleep: how to wait (tests pass a recorder instead of sleeping).
    """

    def __init__(
        self,
        rubric: str,
        model: str,
        scale: int = 5,
        cache_path: str | os.PathLike[str] | None = None,
        *,
        client: anthropic.Anthropic | None = None,
        system: str | None = None,
        **settings: Unpack[JudgeSettings],
    ) -> None:
        super().__init__(rubric, model, scale, cache_path, system=system, **settings)
        self._injected_client = client
        self._client: Any = None
        self._client_lock = threading.Lock()

    def __repr__(self) -> str:
        cache = f", cache_path={str(self.cache.path)!r}" if self.cache is not None else ""
        return f"LLMJudge(model={self.model!r}, scale={self.scale}{cache})"

    def _missing_key(self) -> ConfigError:
        return ConfigError(
            f"LLM judge {self.model!r}: no Anthropic API key; set {API_KEY_ENV} "
            "(or run with --judge-cache-only to grade from the judge cache alone)"
        )

    def _check_api(self) -> None:
        if self._injected_client is None and not (
            os.environ.get(API_KEY_ENV, "").strip() or os.environ.get("ANTHROPIC_AUTH_TOKEN")
        ):
            raise self._missing_key()
        import anthropic

        client = self._messages_client().with_options(
            max_retries=PROBE_RETRIES,
            timeout=anthropic.Timeout(PROBE_TIMEOUT_S, connect=min(PROBE_TIMEOUT_S, 5.0)),
        )
        try:
            client.models.retrieve(self.model)
        except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as exc:
            raise ConfigError(
                f"LLM judge {self.model!r}: the Anthropic API refused the key "
                f"(HTTP {exc.status_code}); check {API_KEY_ENV}"
            ) from None
        except anthropic.APIConnectionError as exc:  # includes timeouts
            raise JudgeError(
                f"LLM judge {self.model!r}: cannot reach the Anthropic API at "
                f"{client.base_url} ({_one_line(exc.message)}); check the network and "
                "ANTHROPIC_BASE_URL, or run with --judge-cache-only"
            ) from None
        except TypeError as exc:
            if "authentication" in str(exc) or "api_key" in str(exc):
                raise self._missing_key() from None
            raise
        except (anthropic.APIError, ValueError):
            # 404 (a proxy without /v1/models), 429/5xx (busy now): the lookup proves
            # nothing either way, and each grade still reports its own failure.
            pass

    # talking to the API ----------------------------------------------------------------

    def _messages_client(self) -> Any:
        """The client to call, built or adjusted once (thread-safe)."""
        with self._client_lock:
            if self._client is None:
                overrides: dict[str, Any] = {}
                if self.timeout_s is not None:
                    overrides["timeout"] = self.timeout_s
                if self._injected_client is None:
                    import anthropic

                    retries = DEFAULT_MAX_RETRIES if self.max_retries is None else self.max_retries
                    overrides.setdefault(
                        "timeout",
                        anthropic.Timeout(DEFAULT_TIMEOUT_S, connect=DEFAULT_CONNECT_TIMEOUT_S),
                    )
                    self._client = anthropic.Anthropic(max_retries=retries, **overrides)
                else:
                    if self.max_retries is not None:
                        overrides["max_retries"] = self.max_retries
                    client = self._injected_client
                    self._client = client.with_options(**overrides) if overrides else client
            return self._client

    def _create(self, response: TargetResponse, case: GoldenCase) -> Reply:
        import anthropic

        while True:
            try:
                return self._reply_of(self._request(response, case), case)
            except anthropic.RateLimitError as exc:  # past the SDK's own retries
                self._wait_out(exc.response.headers, case, _describe_status_error(exc))

    def _request(self, response: TargetResponse, case: GoldenCase) -> Any:
        client = self._messages_client()
        import anthropic

        try:
            return client.messages.create(
                model=self.model,
                max_tokens=self.max_tokens,
                system=SYSTEM_PROMPT
                if self.system is None
                else f"{SYSTEM_PROMPT}\n\n{self.system}",
                messages=[{"role": "user", "content": self.prompt(response, case)}],
                tools=[self.tool],
                tool_choice={
                    "type": "tool",
                    "name": TOOL_NAME,
                    "disable_parallel_tool_use": True,
                },
                # anthropic>=1.0 dropped the temperature keyword and recent models reject
                # it, so it goes on the wire only when the user set it.
                **(
                    {}
                    if self.temperature is None
                    else {"extra_body": {"temperature": self.temperature}}
                ),
            )
        except anthropic.RateLimitError:
            raise  # _create decides whether to wait it out
        except anthropic.APIStatusError as exc:
            raise self._fail(case, _describe_status_error(exc)) from exc
        except anthropic.APIConnectionError as exc:
            url = getattr(getattr(exc, "request", None), "url", None)
            raise self._fail(
                case,
                f"could not reach the Anthropic API at {url or '?'} "
                f"({_one_line(exc.message)}); check the network, base_url and timeout",
            ) from exc
        except anthropic.APIError as exc:
            raise self._fail(case, f"invalid API response ({_one_line(exc.message)})") from exc
        except ValueError as exc:  # the SDK lets a non-JSON body's decode error through
            raise self._fail(
                case, f"malformed API response body: not valid JSON ({_one_line(exc)})"
            ) from exc
        except RecursionError as exc:  # a reply nested too deep for the SDK's parser
            raise self._fail(case, "malformed API response body: nested too deep") from exc
        except TypeError as exc:
            if "authentication" in str(exc) or "api_key" in str(exc):
                raise self._missing_key() from None
            raise

    def _reply_of(self, message: Any, case: GoldenCase) -> Reply:
        """The SDK's message as the :class:`Reply` every judge reads its grade from."""
        content = getattr(message, "content", None)
        if not isinstance(content, list):
            shown = _one_line(repr(message), 80)
            raise self._fail(case, f"malformed API response: no content blocks (got {shown})")
        usage = getattr(message, "usage", None)
        return Reply(
            calls=[
                ToolCall(getattr(block, "name", None), getattr(block, "input", None))
                for block in content
                if getattr(block, "type", None) == "tool_use"
            ],
            text=" ".join(
                str(getattr(block, "text", "")) for block in content if hasattr(block, "text")
            ),
            stop_reason=getattr(message, "stop_reason", None),
            input_tokens=getattr(usage, "input_tokens", None),
            output_tokens=getattr(usage, "output_tokens", None),
        )


def _describe_status_error(exc: Any) -> str:
    """``HTTP 529 overloaded_error: Overloaded`` from an ``APIStatusError``."""
    body = getattr(exc, "body", None)
    error = body.get("error") if isinstance(body, dict) else None
    error = error if isinstance(error, dict) else {}
    error_type = getattr(exc, "type", None) or error.get("type")
    detail = getattr(exc, "api_message", None) or error.get("message")
    status = getattr(exc, "status_code", "?")
    text = f"Anthropic API returned HTTP {status}"
    if error_type:
        text += f" {error_type}"
    if detail:
        text += f": {_one_line(detail, 120)}"
    if status == 529 or status == 429 or (isinstance(status, int) and status >= 500):
        text += "; the API is busy or failing, rerun later or raise max_retries"
    elif status in (401, 403):
        text += "; check ANTHROPIC_API_KEY"
    elif status == 404:
        text += "; check the model name and base_url"
    return text
