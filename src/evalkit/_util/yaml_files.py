"""YAML reading for hand-written config: line numbers, no silent surprises."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError

from evalkit._util.bounded import MAX_DEPTH
from evalkit._util.yaml_values import LiteralInt
from evalkit.errors import InputError

MAX_ALIAS_NODES = 200_000
"""Most nodes all aliases of one document may expand to, together."""


class _Loader(yaml.SafeLoader):
    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._open_anchors: set[str] = set()
        self._alias_nodes = 0
        self._expanded: dict[int, int] = {}  # id(node) -> nodes it expands to

    def construct_literal_int(self, node: yaml.ScalarNode) -> LiteralInt:
        return LiteralInt(self.construct_yaml_int(node), str(node.value))

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            if event.anchor in self._open_anchors:
                raise ComposerError(
                    problem=f"recursive alias *{event.anchor} (it refers to the value that "
                    "contains it, which would never end); write the value out instead",
                    problem_mark=event.start_mark,
                )
            node = super().compose_node(parent, index)
            assert node is not None
            self._alias_nodes += self._expanded_size(node)
            if self._alias_nodes > MAX_ALIAS_NODES:
                raise ComposerError(
                    problem=f"aliases expand to more than {MAX_ALIAS_NODES:,} values "
                    f"(*{event.anchor} here); this looks like an alias bomb "
                    '("billion laughs"): write the values out or use fewer aliases',
                    problem_mark=event.start_mark,
                )
            return node
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if self._depth >= MAX_DEPTH:
            raise ComposerError(
                problem=f"nested deeper than {MAX_DEPTH} levels; flatten the structure",
                problem_mark=event.start_mark,
            )
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            self._open_anchors.add(anchor)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1
            if anchor is not None:
                self._open_anchors.discard(anchor)

    def _expanded_size(self, root: yaml.Node) -> int:
        """How many nodes ``root`` stands for once every alias inside it is expanded."""
        known = self._expanded.get(id(root))
        if known is not None:
            return known
        total = 1
        if isinstance(root, yaml.MappingNode):
            for key, value in root.value:
                total += self._expanded_size(key) + self._expanded_size(value)
        elif isinstance(root, yaml.SequenceNode):
            for item in root.value:
                total += self._expanded_size(item)
        self._expanded[id(root)] = total
        return total

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            value = super().construct_object(node, deep=deep)
            if isinstance(value, str):
                value.encode("utf-8")  # "\ud800" is half a surrogate pair, not text
            return value
        except UnicodeEncodeError:
            raise ConstructorError(
                problem="a \\uD800-\\uDFFF escape is half of a UTF-16 surrogate pair, not a "
                "character",
                problem_mark=node.start_mark,
            ) from None
        except yaml.YAMLError:
            raise
        except (ValueError, OverflowError, TypeError) as exc:
            # e.g. an integer longer than Python converts, or a date like 2001-13-45
            shown = str(node.value)
            shown = shown if len(shown) <= 40 else shown[:37] + "..."
            raise ConstructorError(
                None, None, f"cannot read {shown!r}: {_one_line(str(exc))}", node.start_mark
            ) from None


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
    except InputError:
        raise
    except ValueError as exc:  # the scanner's chr() on an escape such as "\U7FFFFFFF"
        line = int(loader.get_mark().line) + 1
        raise error(f"{source}:{line}: invalid YAML: {_one_line(str(exc))}") from None
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
