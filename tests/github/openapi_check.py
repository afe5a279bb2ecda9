"""Validate HTTP traffic against the vendored slice of GitHub's OpenAPI description.

The description is OpenAPI 3.0 (``nullable: true``); it is converted once to JSON Schema
2020-12 (``anyOf [..., null]``) and every operation's request body, query parameters,
status code and response body are checked with ``jsonschema``. The same description
also synthesises minimal valid objects (every required field filled), which the fake
server then overrides with the values a test cares about.
"""

from __future__ import annotations

import copy
import importlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

# Imported by name: jsonschema ships no type information (and may or may not have
# stubs installed), so it is used as Any rather than behind a type: ignore.
_jsonschema: Any = importlib.import_module("jsonschema")

SPEC_PATH = Path(__file__).parent / "openapi" / "api.github.com.trimmed.json"
_URN = "urn:github-openapi"


def _to_json_schema(node: Any) -> Any:
    """OpenAPI 3.0 schema objects -> JSON Schema: ``nullable`` becomes ``anyOf null``."""
    if isinstance(node, list):
        return [_to_json_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    converted = {k: _to_json_schema(v) for k, v in node.items() if k != "nullable"}
    if node.get("nullable") is True:
        return {"anyOf": [converted, {"type": "null"}]}
    return converted


def _pointer(*parts: str) -> str:
    return "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts)


@dataclass(frozen=True)
class Operation:
    template: str
    method: str
    regex: re.Pattern[str]
    spec: dict[str, Any]


class OpenApi:
    """The vendored description: operation lookup, validation, example synthesis."""

    def __init__(self, path: Path = SPEC_PATH) -> None:
        raw = json.loads(path.read_text(encoding="utf-8"))
        self.doc: dict[str, Any] = _to_json_schema(raw)
        resource = Resource.from_contents(self.doc, default_specification=DRAFT202012)
        self._registry: Registry[Any] = Registry().with_resource(_URN, resource)
        self.operations: list[Operation] = []
        for template, methods in self.doc["paths"].items():
            # {path} and {ref} may contain slashes; other parameters may not.
            pattern = re.sub(
                r"\{(\w+)\}",
                lambda m: (
                    f"(?P<{m.group(1)}>.+)"
                    if m.group(1) in ("path", "ref")
                    else f"(?P<{m.group(1)}>[^/]+)"
                ),
                template,
            )
            for method, spec in methods.items():
                self.operations.append(
                    Operation(template, method.upper(), re.compile(f"^{pattern}$"), spec)
                )
        # Most specific first: fewer parameters wins (".../git/refs" before ".../{path}").
        self.operations.sort(key=lambda op: (op.template.count("{"), -len(op.template)))

    def match(self, method: str, path: str) -> Operation | None:
        for op in self.operations:
            if op.method == method and op.regex.match(path):
                return op
        return None

    # -- validation -----------------------------------------------------------------------

    def _errors(self, schema_ref: str, instance: Any) -> list[str]:
        validator = _jsonschema.Draft202012Validator({"$ref": schema_ref}, registry=self._registry)
        return [
            f"{'/'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message[:300]}"
            for e in validator.iter_errors(instance)
        ]

    def _resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            _, _, kind, name = node["$ref"].split("/", 3)
            node = self.doc["components"][kind][name]
        return node

    def _parameters(self, op: Operation) -> list[dict[str, Any]]:
        return [self._resolve(p) for p in op.spec.get("parameters", [])]

    def check_request(
        self, op: Operation, query: dict[str, list[str]], body: Any | None
    ) -> list[str]:
        where = f"{op.method} {op.template}"
        errors: list[str] = []
        declared = {p["name"]: p for p in self._parameters(op) if p.get("in") == "query"}
        for name, values in query.items():
            if name not in declared:
                errors.append(f"{where}: undeclared query parameter {name!r}")
                continue
            kind = declared[name].get("schema", {}).get("type")
            if kind == "integer" and not all(v.lstrip("-").isdigit() for v in values):
                errors.append(f"{where}: query {name}={values} is not an integer")
        request_body = op.spec.get("requestBody")
        if request_body is None:
            if body is not None:
                errors.append(f"{where}: has a body but the operation takes none")
            return errors
        if body is None:
            if request_body.get("required"):
                errors.append(f"{where}: required request body missing")
            return errors
        ref = "#" + _pointer(
            "",
            "paths",
            op.template,
            op.method.lower(),
            "requestBody",
            "content",
            "application/json",
            "schema",
        )
        errors += [f"{where} request {e}" for e in self._errors(_URN + ref, body)]
        return errors

    def documents(self, op: Operation, status: int) -> bool:
        return str(status) in op.spec["responses"] or "default" in op.spec["responses"]

    def check_schema(self, schema_name: str, instance: Any) -> list[str]:
        ref = "#" + _pointer("", "components", "schemas", schema_name)
        return [f"{schema_name}: {e}" for e in self._errors(_URN + ref, instance)]

    def check_response(self, op: Operation, status: int, body: Any | None) -> list[str]:
        where = f"{op.method} {op.template} -> {status}"
        responses = op.spec["responses"]
        key = str(status) if str(status) in responses else "default"
        if key not in responses:
            if status >= 500:
                return []  # any endpoint can fail with a 5xx; the spec lists few of them
            return [f"{where}: status not documented for this operation"]
        response = responses[key]
        pointer_parts = ["", "paths", op.template, op.method.lower(), "responses", key]
        while "$ref" in response:
            _, _, kind, name = response["$ref"].split("/", 3)
            pointer_parts = ["", "components", kind, name]
            response = self.doc["components"][kind][name]
        content = response.get("content", {})
        if "application/json" not in content:
            if body is not None:
                return [f"{where}: body sent but the response declares no JSON content"]
            return []
        if body is None:
            return [f"{where}: JSON body missing"]
        ref = "#" + _pointer(*pointer_parts, "content", "application/json", "schema")
        return [f"{where} response {e}" for e in self._errors(_URN + ref, body)]

    # -- synthesis ------------------------------------------------------------------------

    def example(self, schema_name: str) -> Any:
        """A minimal valid instance of ``#/components/schemas/<schema_name>``."""
        return self._synth(self.doc["components"]["schemas"][schema_name], depth=0)

    def _synth(self, schema: Any, depth: int) -> Any:
        if depth > 12:
            return None
        if "$ref" in schema:
            return self._synth(self._resolve(schema), depth + 1)
        if "anyOf" in schema:
            return self._synth(schema["anyOf"][0], depth + 1)
        if "oneOf" in schema:
            return self._synth(schema["oneOf"][0], depth + 1)
        if "allOf" in schema:
            merged: dict[str, Any] = {}
            for part in schema["allOf"]:
                value = self._synth(part, depth + 1)
                if isinstance(value, dict):
                    merged.update(value)
            return merged
        if "enum" in schema:
            return copy.deepcopy(schema["enum"][0])
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = kind[0]
        if kind == "object" or (kind is None and "properties" in schema):
            props = schema.get("properties", {})
            return {
                name: self._synth(props.get(name, {"type": "string"}), depth + 1)
                for name in schema.get("required", [])
            }
        if kind == "array":
            return []
        if kind == "integer":
            return 1
        if kind == "number":
            return 1.0
        if kind == "boolean":
            return False
        if kind == "null":
            return None
        fmt = schema.get("format")
        if fmt == "date-time":
            return "2024-01-01T00:00:00Z"
        if fmt == "uri":
            return "https://example.invalid/"
        if fmt == "email":
            return "nobody@example.invalid"
        return "x"


__all__ = ["SPEC_PATH", "OpenApi", "Operation"]
