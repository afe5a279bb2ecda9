"""YAML reading for hand-written config: line numbers, no silent surprises.

``yaml.safe_load`` loses three things a fail-loud loader needs:

* where each value came from (errors should say ``checks.yaml:12``), so the
  node tree is kept next to the data;
* duplicate keys, which PyYAML resolves silently to the last one (a second
  ``threshold:`` would quietly replace the first), so they are refused;
* how an integer was written: ``id: 010`` is the integer 8 to YAML, so ints
  remember their literal text and :func:`as_text` refuses ids that would not
  survive the round trip.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

from evalkit.errors import InputError


class LiteralInt(int):
    """An ``int`` read from YAML that remembers how it was written."""

    literal: str

    def __new__(cls, value: int, literal: str) -> LiteralInt:
        obj = super().__new__(cls, value)
        obj.literal = literal
        return obj


class _Loader(yaml.SafeLoader):
    def construct_literal_int(self, node: yaml.ScalarNode) -> LiteralInt:
        return LiteralInt(self.construct_yaml_int(node), str(node.value))


_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.construct_literal_int)

ErrorFactory = Callable[[str], InputError]


@dataclass(frozen=True)
class YamlDoc:
    """Parsed data plus the node it came from (``None`` for an empty document)."""

    data: Any
    node: yaml.Node | None


def line_of(node: yaml.Node | None) -> int | None:
    """1-based line where ``node`` starts."""
    if node is None:
        return None
    return int(node.start_mark.line) + 1


def parse(text: str, source: str, error: ErrorFactory) -> YamlDoc:
    """Parse one YAML document, refusing duplicate keys; errors carry ``source:line``."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return YamlDoc(None, None)
        _refuse_duplicate_keys(node, source, error)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        problem = str(exc.problem or exc.context or "unreadable document")
        if exc.problem and exc.context:
            started = f" at line {exc.context_mark.line + 1}" if exc.context_mark else ""
            problem += f" ({exc.context}{started})"
        raise error(f"{where}: invalid YAML: {_one_line(problem)}") from None
    except yaml.YAMLError as exc:
        raise error(f"{source}: invalid YAML: {_one_line(str(exc))}") from None
    finally:
        loader.dispose()
    return YamlDoc(data, node)


def mapping_value_nodes(node: yaml.Node | None) -> dict[str, tuple[yaml.Node, yaml.Node]]:
    """``{key: (key node, value node)}`` for the string keys of a mapping node."""
    if not isinstance(node, yaml.MappingNode):
        return {}
    out: dict[str, tuple[yaml.Node, yaml.Node]] = {}
    for key, value in node.value:
        if isinstance(key, yaml.ScalarNode):
            out.setdefault(str(key.value), (key, value))
    return out


def sequence_items(node: yaml.Node | None) -> list[yaml.Node]:
    """The item nodes of a sequence node (empty for anything else)."""
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


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
    """Read an id-like value as text, refusing values whose text is not what was written.

    Strings pass through; integers become their decimal text when that is how
    they were written (``1`` -> ``"1"``).  Floats (``1.0``), booleans
    (``yes``/``true``) and integers YAML rewrote (``010`` is 8, ``0x1A`` is 26)
    raise :class:`ValueError` with a reason that says to quote the value.
    """
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


def _refuse_duplicate_keys(root: yaml.Node, source: str, error: ErrorFactory) -> None:
    seen_nodes: set[int] = set()
    stack: list[yaml.Node] = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen_nodes:  # anchors can share (or even cycle) nodes
            continue
        seen_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            first: dict[tuple[str, str], int] = {}
            for key, value in node.value:
                stack.append(value)
                if not isinstance(key, yaml.ScalarNode) or key.value == "<<":
                    continue
                ident = (str(key.tag), str(key.value))
                line = int(key.start_mark.line) + 1
                if ident in first:
                    raise error(
                        f"{source}:{line}: duplicate key {key.value!r} "
                        f"(first at line {first[ident]}); YAML would silently keep only the last"
                    )
                first[ident] = line
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


def _one_line(text: str) -> str:
    return " ".join(text.split())
