"""A loopback server that speaks the OpenAI Chat Completions protocol, for judge tests.

The same real threaded server as :mod:`tests.fakes.anthropic_server` (scripted
replies, recorded requests), routed and validated the way the real services do:

* ``POST /v1/chat/completions`` (OpenAI, vLLM, Ollama) with
  ``Authorization: Bearer KEY``, or
  ``POST /openai/deployments/NAME/chat/completions?api-version=V`` (Azure) with
  ``api-key: KEY``; ``api_key=None`` makes the server keyless, like Ollama;
* a request whose tools are not strict-valid function tools, or whose
  ``tool_choice`` names a function it does not define, is refused with 400, as
  OpenAI refuses it, so a client bug cannot hide behind a permissive fake;
* ``reasoning_model=True`` behaves like OpenAI's reasoning and gpt-5-class
  models: ``max_tokens`` and a temperature other than 1 are refused with the
  400 bodies those models send (``max_completion_tokens`` is what they take).

    with FakeOpenAI() as api:
        api.script(grade(4), rate_limited("2"), server_error())
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .anthropic_server import FakeAnthropic, JsonObj, RecordedRequest, Reply, _json, _next_id

__all__ = [
    "FakeOpenAI",
    "completion",
    "error",
    "grade",
    "rate_limited",
    "server_error",
    "text_only",
    "tool_call",
]

Rendered = tuple[int, dict[str, str], bytes]


def completion(
    message: JsonObj,
    *,
    finish_reason: str = "tool_calls",
    prompt_tokens: int = 150,
    completion_tokens: int = 25,
    usage: bool = True,
) -> Reply:
    """A 200 ``chat.completion`` with one choice holding ``message``."""

    def render(request: JsonObj) -> Rendered:
        body: JsonObj = {
            "id": f"chatcmpl-fake{_next_id()}",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": request.get("model", "unknown"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", **message},
                    "logprobs": None,
                    "finish_reason": finish_reason,
                }
            ],
        }
        if usage:
            body["usage"] = {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            }
        return _json(200, body, {"x-request-id": f"req_fake{_next_id()}"})

    return Reply(render)


def tool_call(arguments: object, *, name: str = "record_grade", **kwargs: Any) -> Reply:
    """A reply whose message calls one function; ``arguments`` is sent as given if a string."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    call = {
        "id": f"call_fake{_next_id()}",
        "type": "function",
        "function": {"name": name, "arguments": text},
    }
    # A forced named tool_choice finishes with "stop" on OpenAI, not "tool_calls".
    return completion({"content": None, "tool_calls": [call]}, finish_reason="stop", **kwargs)


def grade(score: int, reason: str = "scored by the fake", **kwargs: Any) -> Reply:
    return tool_call({"score": score, "reason": reason}, **kwargs)


def text_only(text: str = "I would give it a 4.") -> Reply:
    return completion({"content": text}, finish_reason="stop")


def error(
    status: int,
    code: str,
    message_text: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> Reply:
    """An error with OpenAI's body: ``{"error": {"message", "type", "param", "code"}}``."""
    body = {
        "error": {
            "message": message_text or f"{code} (fake)",
            "type": code,
            "param": None,
            "code": code,
        }
    }
    return Reply(lambda _request: _json(status, body, headers))


def rate_limited(retry_after: str | None = "1", *, header: str = "retry-after") -> Reply:
    headers = {} if retry_after is None else {header: retry_after}
    return error(429, "rate_limit_exceeded", "Rate limit reached for requests", headers)


def server_error(status: int = 500) -> Reply:
    return error(status, "server_error", "The server had an error while processing your request")


def _refusal(status: int, code: str, text: str) -> Rendered:
    return _json(status, {"error": {"message": text, "type": code, "param": None, "code": code}})


def _reasoning_refusal(body: JsonObj) -> Rendered | None:
    """The 400 a reasoning model answers an older model's request with (OpenAI's wording)."""
    if "max_tokens" in body:
        error = {
            "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            "type": "invalid_request_error",
            "param": "max_tokens",
            "code": "unsupported_parameter",
        }
        return _json(400, {"error": error})
    temperature = body.get("temperature", 1)
    if temperature != 1:
        error = {
            "message": f"Unsupported value: 'temperature' does not support {temperature} with "
            "this model. Only the default (1) value is supported.",
            "type": "invalid_request_error",
            "param": "temperature",
            "code": "unsupported_value",
        }
        return _json(400, {"error": error})
    return None


def _strict_problem(parameters: object) -> str | None:
    """Why a strict function schema would be refused (OpenAI's structured-output rules)."""
    if not isinstance(parameters, dict) or parameters.get("type") != "object":
        return "parameters must be a JSON Schema object"
    if parameters.get("additionalProperties") is not False:
        return "strict schemas need additionalProperties: false"
    props = parameters.get("properties")
    if not isinstance(props, dict):
        return "parameters.properties must be an object"
    if sorted(parameters.get("required", [])) != sorted(props):
        return "strict schemas must list every property in required"
    for name, schema in props.items():
        if not isinstance(schema, dict) or "type" not in schema:
            return f"property {name!r} needs a type in strict mode"
    return None


def _tools_problem(body: JsonObj) -> str | None:
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "you must provide a model parameter"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages must be a non-empty array"
    for m in messages:
        if not isinstance(m, dict) or m.get("role") not in ("system", "user", "assistant"):
            return "each message needs a role"
    tools = body.get("tools", [])
    names = []
    for tool in tools:
        function = tool.get("function") if isinstance(tool, dict) else None
        if tool.get("type") != "function" or not isinstance(function, dict):
            return "tools must be function tools"
        names.append(function.get("name"))
        if function.get("strict"):
            problem = _strict_problem(function.get("parameters"))
            if problem:
                return f"invalid schema for function {function.get('name')!r}: {problem}"
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        wanted = (choice.get("function") or {}).get("name")
        if wanted not in names:
            return f"tool_choice names function {wanted!r}, which tools do not define"
    return None


class FakeOpenAI(FakeAnthropic):
    """The server; ``api_key=None`` accepts requests without credentials."""

    def __init__(
        self,
        *,
        api_key: str | None = "test",
        models: tuple[str, ...] = (),
        reasoning_model: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.api_key = api_key
        self.models = models  # what GET /v1/models lists (empty: no list to check against)
        self.reasoning_model = reasoning_model
        if "default" not in kwargs:
            self.default = grade(4, "good enough")

    @property
    def openai_base_url(self) -> str:
        return f"{self.base_url}/v1"

    def azure_base_url(self, deployment: str = "judge") -> str:
        return f"{self.base_url}/openai/deployments/{deployment}"

    @property
    def completion_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def _authorised(self, headers: Mapping[str, str], azure: bool) -> bool:
        if self.api_key is None:
            return True
        if azure:
            return headers.get("api-key") == self.api_key
        return headers.get("authorization") == f"Bearer {self.api_key}"

    def answer_get(self, path: str, headers: Mapping[str, str]) -> Rendered:
        """``GET /v1/models``: the model list a judge's pre-flight reads."""
        if path != "/v1/models":
            return _refusal(404, "not_found", f"no route {path}")
        if not self._authorised(headers, azure=False):
            return _refusal(401, "invalid_api_key", "Incorrect API key provided")
        data = [{"id": m, "object": "model", "owned_by": "fake"} for m in self.models]
        return _json(200, {"object": "list", "data": data})

    def refuse(self, request: RecordedRequest) -> Rendered | None:
        azure = request.path.startswith("/openai/deployments/")
        if not (request.path == "/v1/chat/completions" or azure) or not request.path.endswith(
            "/chat/completions"
        ):
            return _refusal(404, "not_found", f"no route {request.path}")
        if azure and "api-version=" not in request.query:
            return _refusal(404, "404", "Resource not found (api-version is required)")
        if not self._authorised(request.headers, azure):
            return _refusal(401, "invalid_api_key", "Incorrect API key provided")
        if request.body is None:
            return _refusal(400, "invalid_request_error", "body must be a JSON object")
        problem = _tools_problem(request.body)
        if problem:
            return _refusal(400, "invalid_request_error", problem)
        return _reasoning_refusal(request.body) if self.reasoning_model else None
