"""What a YAML document reads to, usable without PyYAML."""

from __future__ import annotations

from typing import Any


class LiteralInt(int):
    """An ``int`` read from YAML that remembers how it was written."""

    literal: str

    def __new__(cls, value: int, literal: str) -> LiteralInt:
        obj = super().__new__(cls, value)
        obj.literal = literal
        return obj


def plain(value: Any) -> Any:
    """Strip :class:`LiteralInt` back to ``int`` throughout a value."""
    if isinstance(value, LiteralInt):
        return int(value)
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def as_text(value: Any) -> str:
    """Read an id-like value as text, refusing values whose text is not what was written."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        raise ValueError(
            f"{value!r} is a boolean (YAML reads yes/no/true/false/on/off as booleans); "
            "quote it to use it as text"
        )
    if isinstance(value, LiteralInt) and value.literal != str(int(value)):
        raise ValueError(
            f"{value.literal} is read by YAML as the integer {int(value)}; "
            f"quote it ('{value.literal}') to keep it as written"
        )
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        raise ValueError(f"{value!r} is a number with a decimal point; quote it to use it as text")
    if value is None:
        raise ValueError("it is empty")
    raise ValueError(f"expected text, got {type(value).__name__} {value!r}")
