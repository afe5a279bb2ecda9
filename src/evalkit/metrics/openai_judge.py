"""The LLM judge over the OpenAI-compatible Chat Completions protocol."""

from __future__ import annotations

import json
import os
import threading
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Unpack

from evalkit._util.bounded import loads
from evalkit.errors import ConfigError, EvalkitWarning, JudgeError
from evalkit.metrics.judge_base import (
    PROBE_TIMEOUT_S,
    SYSTEM_PROMPT,
    TOOL_NAME,
    JudgeBase,
    JudgeSettings,
    Reply,
    ToolCall,
    _digest,
    _one_line,
)

if TYPE_CHECKING:
    import httpx

    from evalkit._model.golden_cases import GoldenCase
    from evalkit._model.results import TargetResponse

__all__ = ["PROVIDER", "TOKEN_LIMIT_KEYS", "OpenAIJudge"]

PROVIDER = "openai-compatible"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_RETRIES = 2
BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 8.0
# The request fields a token limit can travel in; "auto" starts with the first.
TOKEN_LIMIT_KEYS = ("max_tokens", "max_completion_tokens")
AUTO_TOKEN_LIMIT = "auto"


class OpenAIJudge(JudgeBase):
    """An LLM judge that grades through an OpenAI-compatible ``/chat/completions``."""

    def __init__(
        self,
        rubric: str,
        model: str,
        scale: int = 5,
        cache_path: str | os.PathLike[str] | None = None,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        api_key_env: str = DEFAULT_API_KEY_ENV,
        api_version: str | None = None,
        token_limit_key: str = AUTO_TOKEN_LIMIT,
        http_client: httpx.Client | None = None,
        **settings: Unpack[JudgeSettings],
    ) -> None:
        super().__init__(rubric, model, scale, cache_path, **settings)
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ConfigError(
                f"OpenAIJudge: base_url must be an http(s) URL such as {DEFAULT_BASE_URL!r}, "
                f"got {base_url!r}"
            )
        self.base_url = base_url.rstrip("/")
        if api_version is not None and (not isinstance(api_version, str) or not api_version):
            raise ConfigError("OpenAIJudge: api_version must be a non-empty string or None")
        self.api_version = api_version
        self._api_key = api_key
        self.api_key_env = api_key_env
        if token_limit_key not in (*TOKEN_LIMIT_KEYS, AUTO_TOKEN_LIMIT):
            raise ConfigError(
                "OpenAIJudge: token_limit_key must be 'max_tokens', 'max_completion_tokens' "
                f"or 'auto', got {token_limit_key!r}"
            )
        self.token_limit_key = token_limit_key
        # The key requests carry now: "auto" may move it once, from the first to the second.
        self._limit_key = (
            TOKEN_LIMIT_KEYS[0] if token_limit_key == AUTO_TOKEN_LIMIT else token_limit_key
        )
        self._http: httpx.Client | None = http_client
        self._http_lock = threading.Lock()

    # identity --------------------------------------------------------------------------

    def _wire(self) -> dict[str, Any]:
        return {"provider": PROVIDER, "base_url": self.base_url, "api_version": self.api_version}

    @property
    def fingerprint(self) -> str:
        return _digest({"judge": super().fingerprint, **self._wire()})[:16]

    def cache_key(self, response: TargetResponse, case: GoldenCase, attempt: int = 1) -> str:
        # The Anthropic key (model, rubric, scale, case, output) plus where the grade
        # came from: the same model name on another server is another judge.
        return _digest({"grade": super().cache_key(response, case, attempt), **self._wire()})

    def __repr__(self) -> str:
        cache = f", cache_path={str(self.cache.path)!r}" if self.cache is not None else ""
        return (
            f"OpenAIJudge(model={self.model!r}, base_url={self.base_url!r}, "
            f"scale={self.scale}{cache})"
        )

    # the request ------------------------------------------------------------------------

    @property
    def endpoint(self) -> str:
        return f"{self.base_url}/chat/completions"

    def function_tool(self) -> dict[str, Any]:
        """``record_grade`` as a strict Chat Completions function tool."""
        anthropic_tool = self.tool
        parameters = json.loads(json.dumps(anthropic_tool["input_schema"]))
        # Strict mode wants every property typed; the enum still bounds the range.
        parameters["properties"]["score"]["type"] = "integer"
        return {
            "type": "function",
            "function": {
                "name": TOOL_NAME,
                "description": anthropic_tool["description"],
                "strict": True,
                "parameters": parameters,
            },
        }

    def request_body(self, response: TargetResponse, case: GoldenCase) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": self.prompt(response, case)},
            ],
            "tools": [self.function_tool()],
            "tool_choice": {"type": "function", "function": {"name": TOOL_NAME}},
            "parallel_tool_calls": False,
            self._limit_key: self.max_tokens,
        }
        if self.temperature is not None:
            body["temperature"] = self.temperature
        return body

    def _key(self) -> tuple[str | None, str]:
        """The API key and where it came from (``api_key`` or its environment variable)."""
        if self._api_key is not None:
            return self._api_key, "api_key"
        return os.environ.get(self.api_key_env), self.api_key_env

    def _headers(self) -> dict[str, str]:
        key = self._key()[0]
        if not key:
            return {}
        if self.api_version is not None:
            return {"api-key": key}
        return {"authorization": f"Bearer {key}"}

    def _client_http(self) -> httpx.Client:
        with self._http_lock:
            if self._http is None:
                import httpx

                self._http = httpx.Client(
                    timeout=self.timeout_s if self.timeout_s is not None else DEFAULT_TIMEOUT_S
                )
            return self._http

    def close(self) -> None:
        """Close the HTTP connection pool this judge built (an injected client is left open)."""
        with self._http_lock:
            if self._http is not None:
                self._http.close()
                self._http = None

    # before anything runs ----------------------------------------------------------------

    def _check_api(self) -> None:
        """The pre-flight's API half (:meth:`JudgeBase.preflight` calls it unless replaying)."""
        import httpx

        key, where = self._key()
        needs_key = self.base_url == DEFAULT_BASE_URL or self.api_version is not None
        if needs_key and not (key or "").strip():
            raise ConfigError(
                f"LLM judge {self.model!r}: no API key for {self.base_url}; set "
                f"{self.api_key_env} (or run with --judge-cache-only to grade from the judge "
                "cache alone)"
            )
        if self.api_version is not None:
            return
        url = f"{self.base_url}/models"
        try:
            reply = self._client_http().get(url, headers=self._headers(), timeout=PROBE_TIMEOUT_S)
        except httpx.TransportError as exc:
            raise JudgeError(
                f"LLM judge {self.model!r}: cannot reach {url} ({type(exc).__name__}: "
                f"{_one_line(exc, 100)}); check the server and base_url, or run with "
                "--judge-cache-only"
            ) from None
        if reply.status_code in (401, 403):
            raise ConfigError(
                f"LLM judge {self.model!r}: {self.base_url} refused the key "
                f"(HTTP {reply.status_code}); check {where}"
            )
        if reply.status_code != 200:
            return
        try:
            data = reply.json().get("data")
        except (ValueError, AttributeError):
            return
        served = (
            sorted(str(m["id"]) for m in data if isinstance(m, dict) and "id" in m)
            if isinstance(data, list)
            else []
        )
        if served and self.model not in served:
            shown = ", ".join(served[:10]) + (" ..." if len(served) > 10 else "")
            raise ConfigError(
                f"LLM judge {self.model!r}: {self.base_url} does not serve this model "
                f"(it lists: {shown}); check the model name and base_url"
            )

    # talking to the server --------------------------------------------------------------

    def _create(self, response: TargetResponse, case: GoldenCase) -> Reply:
        import httpx

        client = self._client_http()
        body = self.request_body(response, case)
        params = {"api-version": self.api_version} if self.api_version is not None else None
        retries = DEFAULT_RETRIES if self.max_retries is None else self.max_retries
        failures = 0
        while True:
            try:
                reply = client.post(
                    self.endpoint, json=body, headers=self._headers(), params=params
                )
            except httpx.TransportError as exc:
                if failures < retries:
                    self._backoff(failures)
                    failures += 1
                    continue
                raise self._fail(
                    case,
                    f"could not reach {self.endpoint} ({type(exc).__name__}: "
                    f"{_one_line(exc, 100)}) after {failures + 1} attempt(s); check the "
                    "server, base_url and timeout",
                ) from exc
            status = reply.status_code
            if status == 429:
                self._wait_out(reply.headers, case, self._describe(reply, attempts=1))
                continue
            if status >= 500 and failures < retries:
                self._backoff(failures)
                failures += 1
                continue
            if status == 400 and self._switch_limit_key(body, reply):
                body = self.request_body(response, case)
                continue
            if status >= 400:
                raise self._fail(case, self._describe(reply, attempts=failures + 1))
            return self._translate(reply, case)

    def _switch_limit_key(self, body: Mapping[str, Any], reply: httpx.Response) -> bool:
        """Whether to resend ``body`` with ``max_completion_tokens`` (``"auto"`` only)."""
        old, new = TOKEN_LIMIT_KEYS
        if self.token_limit_key != AUTO_TOKEN_LIMIT or old not in body:
            return False
        if _refused_field(reply) != old:
            return False
        with self._http_lock:
            switched, self._limit_key = self._limit_key == old, new
        if switched:
            warnings.warn(
                EvalkitWarning(
                    f"LLM judge {self.model!r}: {self.base_url} refused 'max_tokens' for this "
                    "model; sending 'max_completion_tokens' instead (the refused request was "
                    "not billed). Set token_limit_key: max_completion_tokens in the judge "
                    "settings to skip the refusal"
                ),
                stacklevel=2,
            )
        return True

    def _backoff(self, failures: int) -> None:
        self._sleep(min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2**failures))

    def _describe(self, reply: httpx.Response, *, attempts: int) -> str:
        """``server returned HTTP 500 server_error: boom`` plus a hint."""
        doc, error = _error_of(reply)
        kind = detail = None
        if isinstance(error, dict):
            kind = error.get("code") or error.get("type")
            detail = error.get("message")
        elif isinstance(error, str):
            detail = error
        status = reply.status_code
        text = f"{self.endpoint} returned HTTP {status}"
        if kind:
            text += f" {kind}"
        if detail:
            text += f": {_one_line(detail, 120)}"
        elif not isinstance(doc, dict) and reply.content:
            text += f": {_one_line(reply.text, 80)}"
        if status >= 500:
            text += (
                f" after {attempts} attempt(s); the server is failing, rerun later or raise "
                "max_retries"
            )
        elif status in (401, 403):
            text += f"; check the key ({self._key()[1]})"
        elif status == 404:
            text += "; check the model name and base_url"
        elif status == 400:
            text += self._refusal_advice(_refused_field(reply))
        return text

    def _refusal_advice(self, refused: str | None) -> str:
        """How to change the settings when the server refused one of our own fields."""
        if refused == "temperature":
            return (
                "; this model accepts only its default temperature: leave temperature unset (None)"
            )
        if refused == self._limit_key and refused in TOKEN_LIMIT_KEYS:
            other = TOKEN_LIMIT_KEYS[1 - TOKEN_LIMIT_KEYS.index(refused)]
            return (
                f"; this server wants '{other}': set token_limit_key: {other} (or 'auto') in "
                "the judge settings"
            )
        return ""

    def _translate(self, reply: httpx.Response, case: GoldenCase) -> Reply:
        """The Chat Completions reply as the :class:`Reply` every judge reads its grade from."""
        try:
            doc = loads(reply.content)  # bounded: a reply nested 10^5 deep is malformed
        except ValueError as exc:
            raise self._fail(
                case, f"malformed API response body: not valid JSON ({_one_line(exc, 80)})"
            ) from None
        choices = doc.get("choices") if isinstance(doc, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            shown = _one_line(json.dumps(doc)[:200], 80)
            raise self._fail(case, f"malformed API response: no choices (got {shown})")
        choice = choices[0]
        message = choice.get("message")
        if not isinstance(message, dict):
            raise self._fail(case, "malformed API response: the choice has no message")
        texts = [message.get(key) for key in ("content", "refusal")]
        calls = message.get("tool_calls") or []
        if not isinstance(calls, list):
            raise self._fail(case, "malformed API response: tool_calls is not a list")
        read: list[ToolCall] = []
        for call in calls:
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict):
                raise self._fail(case, "malformed API response: a tool call has no function")
            arguments = function.get("arguments")
            try:
                parsed = loads(arguments) if isinstance(arguments, str) else arguments
            except ValueError:
                raise self._fail(
                    case,
                    f"{TOOL_NAME} arguments are not valid JSON: {_one_line(arguments, 80)!r}",
                ) from None
            read.append(ToolCall(function.get("name"), parsed))
        usage = doc.get("usage") if isinstance(doc.get("usage"), dict) else {}
        return Reply(
            calls=read,
            text=" ".join(t for t in texts if isinstance(t, str) and t),
            stop_reason=choice.get("finish_reason"),
            input_tokens=usage.get("prompt_tokens"),
            output_tokens=usage.get("completion_tokens"),
        )


def _error_of(reply: httpx.Response) -> tuple[Any, Any]:
    """The reply's JSON document (None if it is not JSON) and its ``error`` member."""
    try:
        doc = loads(reply.content)
    except ValueError:
        return None, None
    return doc, doc.get("error") if isinstance(doc, dict) else None


def _refused_field(reply: httpx.Response) -> str | None:
    """The request field a 400 names as unsupported, or None (another defect)."""
    _, error = _error_of(reply)
    if not isinstance(error, dict):
        return None
    param = error.get("param")
    if param in (*TOKEN_LIMIT_KEYS, "temperature"):
        return str(param)
    message = str(error.get("message") or "")
    if "Use 'max_completion_tokens'" in message:
        return "max_tokens"
    for field_name in (*TOKEN_LIMIT_KEYS, "temperature"):
        if f"'{field_name}'" in message and ("nsupported" in message or "nrecognized" in message):
            return field_name
    return None
