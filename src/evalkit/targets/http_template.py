"""The ``target.http`` config block's two small languages: the payload template and extract."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from evalkit.errors import TargetError

if TYPE_CHECKING:
    from evalkit._model.golden_cases import GoldenCase


def _case_field(case: GoldenCase, name: str) -> Any:
    if name == "id":
        return case.id
    if name == "query":
        return case.query
    if name == "expected":
        return case.expected_text
    if name == "relevant":
        return sorted(case.relevant)
    if name.startswith("context."):
        key = name.removeprefix("context.")
        if key in case.context:
            return case.context[key]
    raise TargetError(
        f"payload template names {{{{{name}}}}}, which case {case.id!r} does not have "
        "(use id, query, expected, relevant or context.<column>)"
    )


def render_payload(template: Any, case: GoldenCase) -> Any:
    """Fill ``{{query}}``-style placeholders; a string that is one placeholder keeps its type."""
    if isinstance(template, str):
        stripped = template.strip()
        if stripped.startswith("{{") and stripped.endswith("}}") and stripped.count("{{") == 1:
            return _case_field(case, stripped[2:-2].strip())
        out = template
        while "{{" in out:
            start = out.index("{{")
            end = out.find("}}", start)
            if end < 0:
                break
            name = out[start + 2 : end].strip()
            out = out[:start] + str(_case_field(case, name)) + out[end + 2 :]
        return out
    if isinstance(template, dict):
        return {k: render_payload(v, case) for k, v in template.items()}
    if isinstance(template, list):
        return [render_payload(v, case) for v in template]
    return template


def jmespath_extract(expr: str) -> Callable[[Any], Any]:
    """``extract`` for HttpTarget: the ids (a list, as str) or the text ``expr`` selects."""
    import jmespath

    compiled = jmespath.compile(expr)

    def extract(body: Any) -> Any:
        found = compiled.search(body)
        if found is None:
            raise ValueError(f"extract {expr!r} matched nothing in the response body")
        if isinstance(found, list):
            return [str(x) for x in found]
        if isinstance(found, str):
            return found
        raise ValueError(
            f"extract {expr!r} gave {type(found).__name__}; it must give a list of ids or a string"
        )

    return extract
