"""Read golden sets from JSONL, YAML and CSV files, failing loudly on anything odd."""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit._model.golden_cases import GoldenCase, GoldenSet
from evalkit._model.registry import get_loader, loader_extensions, register_loader
from evalkit._util import bounded as _bounded
from evalkit._util import yaml_values as _yaml_values
from evalkit._util.text import decode_utf8
from evalkit.errors import GoldenError

KNOWN_FIELDS = ("id", "query", "relevant", "expected", "context")
CSV_RELEVANT_SEPARATOR = "|"

Loader = Callable[[Path], GoldenSet]


def load_goldens(path: str | os.PathLike[str], loader: Loader | str | None = None) -> GoldenSet:
    """Load a golden set; ``loader`` overrides the choice by file extension."""
    file = Path(path)
    _ensure_builtin_loaders()
    if not file.exists():
        relative = "" if file.is_absolute() else f" (relative to {os.getcwd()})"
        raise GoldenError(f"golden file not found: {file}{relative}")
    chosen = _named_loader(loader) if isinstance(loader, str) else loader
    if chosen is None:
        chosen = _loader_for(file)
    goldens: object = chosen(file)  # a client loader may return anything
    if not isinstance(goldens, GoldenSet):
        name = getattr(chosen, "__name__", repr(chosen))
        raise GoldenError(
            f"{file}: loader {name} returned {type(goldens).__name__}, expected a GoldenSet"
        )
    if len(goldens) == 0:
        raise GoldenError(
            f"{file}: the golden file loads zero cases (loaded 0 cases); an empty eval "
            "would pass every gate — check the path and the format"
        )
    if goldens.source is None:
        goldens.source = str(file)
    return goldens


def _named_loader(name: str) -> Loader:
    found = get_loader(name)
    if found is None:
        known = ", ".join(loader_extensions()) or "none"
        raise GoldenError(f"no golden loader named {name!r}; known: {known}")
    return found


def _loader_for(file: Path) -> Loader:
    suffixes = [s.lower().lstrip(".") for s in file.suffixes]
    # Longest compound extension first, so a registered "jsonl.gz" beats "gz".
    for start in range(len(suffixes)):
        found = get_loader(".".join(suffixes[start:]))
        if found is not None:
            return found
    known = ", ".join(f".{ext}" for ext in loader_extensions()) or "none"
    what = f"extension {file.suffix!r}" if file.suffix else "no extension"
    raise GoldenError(
        f"{file}: cannot infer a loader: {what} has no golden loader; known: {known}. "
        "Register one with @register_loader(ext) or pass loader="
    )


# --------------------------------------------------------------------------- reading


def _read_text(file: Path) -> str:
    try:
        data = _bounded.read_bytes(file)
    except FileNotFoundError:
        raise GoldenError(f"golden file not found: {file}") from None
    except OSError as exc:
        raise GoldenError(f"cannot read golden file {file}: {exc.strerror or exc}") from None
    return decode_utf8(data, str(file), GoldenError)


@dataclass(frozen=True)
class CaseWhere:
    """Where a case came from, for error messages."""

    file: Path
    line: int | None
    index: int | None = None  # 1-based case number (YAML, where lines are less obvious)

    def at(self, case_id: str | None = None) -> str:
        head = f"{self.file}:{self.line}" if self.line is not None else str(self.file)
        parts = []
        if self.index is not None:
            parts.append(f"case #{self.index}")
        if case_id is not None:
            parts.append(f"case {case_id!r}" if self.index is None else f"(id {case_id!r})")
        return f"{head}: {' '.join(parts)}: " if parts else f"{head}: "


def collect_cases(cases: Iterable[tuple[GoldenCase, CaseWhere]], file: Path) -> GoldenSet:
    first_line: dict[str, CaseWhere] = {}
    ordered: list[GoldenCase] = []
    for case, where in cases:
        if case.id in first_line:
            prev = first_line[case.id]
            prev_at = f"line {prev.line}" if prev.line is not None else f"case #{prev.index}"
            raise GoldenError(
                f"{where.at()}duplicate case id {case.id!r} (first defined at {prev_at}); "
                "ids must be unique"
            )
        first_line[case.id] = where
        ordered.append(case)
    return GoldenSet(ordered, source=str(file))


# --------------------------------------------------------------------------- one case


def _case_id(raw: Mapping[str, Any], where: CaseWhere) -> str:
    if "id" not in raw or raw["id"] is None:
        missing = "id, query" if raw.get("query") is None else "id"
        raise GoldenError(
            f"{where.at()}case has no 'id' (missing required field(s): {missing}); every "
            f"case needs a unique id (fields present: {', '.join(map(str, raw)) or 'none'})"
        )
    case_id = _text(raw["id"], f"{where.at()}id")
    if not case_id.strip():
        raise GoldenError(f"{where.at()}case id is empty; give every case a unique id")
    if case_id != case_id.strip():
        raise GoldenError(
            f"{where.at()}case id {case_id!r} has leading or trailing whitespace; "
            "remove it (ids are matched exactly)"
        )
    return case_id


def _relevance(
    raw: Any, where: CaseWhere, case_id: str, *, csv_cell: bool
) -> tuple[frozenset[str], dict[str, int]]:
    at = where.at(case_id)
    if raw is None:
        return frozenset(), {}
    if csv_cell and isinstance(raw, str):
        items: list[Any] = [p.strip() for p in raw.split(CSV_RELEVANT_SEPARATOR)]
        if raw.strip() == "":
            return frozenset(), {}
        if any(p == "" for p in items):
            raise GoldenError(
                f"{at}relevant {raw!r} has an empty id between '{CSV_RELEVANT_SEPARATOR}' "
                "separators"
            )
        return _id_list(items, at), {}
    if isinstance(raw, list):
        return _id_list(raw, at), {}
    if isinstance(raw, Mapping):
        grades: dict[str, int] = {}
        for key, grade in raw.items():
            doc = _nonempty_text(key, f"{at}relevant id", f"{at}relevant has an empty id")
            if isinstance(grade, bool) or not isinstance(grade, int):
                raise GoldenError(
                    f"{at}grade of relevant id {doc!r} must be an integer, got {grade!r}"
                )
            if doc in grades:
                raise GoldenError(f"{at}relevant grades {doc!r} twice")
            grades[doc] = int(grade)
        relevant = frozenset(doc for doc, grade in grades.items() if grade >= 1)
        return relevant, grades
    kind = type(raw).__name__
    hint = ' (a list of ids, e.g. ["d1", "d2"])' if isinstance(raw, str) else ""
    raise GoldenError(
        f"{at}relevant must be a list of ids or a mapping id -> grade, got {kind} {raw!r}{hint}"
    )


def _id_list(items: list[Any], at: str) -> frozenset[str]:
    seen: set[str] = set()
    for item in items:
        doc = _nonempty_text(item, f"{at}relevant id", f"{at}relevant has an empty id")
        if doc in seen:
            raise GoldenError(f"{at}relevant lists {doc!r} twice")
        seen.add(doc)
    return frozenset(seen)


def _expected(
    raw: Any, where: CaseWhere, case_id: str, *, ids_csv: bool
) -> tuple[str | None, frozenset[str] | None]:
    """``(reference text, relevant ids)`` from an ``expected`` field."""
    at = where.at(case_id)
    if raw is None:
        return None, None
    if ids_csv and isinstance(raw, str):
        if not raw.strip():
            return None, None
        return None, _relevance(raw, where, case_id, csv_cell=True)[0]
    if isinstance(raw, list):
        bad = [item for item in raw if not isinstance(item, str)]
        if bad:
            raise GoldenError(
                f"{at}expected ids must all be strings, got {bad[0]!r} (quote numeric ids)"
            )
        return None, _id_list(raw, at)
    if isinstance(raw, Mapping):
        raise GoldenError(
            f"{at}`expected` must be a list of ids, a string, or null; got a mapping "
            "(graded relevance goes in `relevant`)"
        )
    return _text(raw, f"{at}expected") or None, None


def _text(value: Any, what: str) -> str:
    """``value`` as text (:func:`evalkit._util.yaml_values.as_text`); ``what`` starts the
    error message."""
    try:
        return _yaml_values.as_text(value)
    except ValueError as exc:
        raise GoldenError(f"{what} must be text: {exc}") from None


def _nonempty_text(value: Any, what: str, empty: str) -> str:
    """:func:`_text`, refusing a blank value with the message ``empty``."""
    text = _text(value, what)
    if not text.strip():
        raise GoldenError(empty)
    return text


def _phrases(key: str, value: Any, at: str) -> Any:
    """An answer metric's list key (``answers``, ``must_include``...) read as text now."""
    from evalkit.metrics.answer_keys import PHRASE_KEYS

    if key not in PHRASE_KEYS or value is None:
        return _yaml_values.plain(value)
    items = value if isinstance(value, list) else [value]
    out: list[str] = []
    for item in items:
        if isinstance(item, list | Mapping) or item is None:
            shown = "null" if item is None else type(item).__name__
            raise GoldenError(f"{at}{key} must be a list of strings, and an item is {shown}")
        empty = f"{at}{key} holds an empty string; remove it or fill it in"
        out.append(_nonempty_text(item, f"{at}{key} item {item!r}", empty))
    return out if isinstance(value, list) else out[0]


def _context(raw: Mapping[str, Any], at: str) -> dict[str, Any]:
    """Every unknown field, plus the entries of a mapping-valued ``context`` field."""
    extra = {k: _phrases(k, v, at) for k, v in raw.items() if k not in KNOWN_FIELDS}
    given = raw.get("context")
    if given is None:
        return extra
    if not isinstance(given, Mapping):
        # Not 0.2.0's nested mapping (e.g. a CSV column named context): keep it as a field.
        return {**extra, "context": _yaml_values.plain(given)}
    merged = {str(k): _phrases(str(k), v, at) for k, v in given.items()}
    for key, value in extra.items():
        if key in merged:
            raise GoldenError(
                f"{at}{key!r} appears both as a top-level field and inside `context`; "
                "remove one so it is clear which value the case means"
            )
        merged[key] = value
    return merged


def build_case(
    raw: Any, where: CaseWhere, *, csv_row: bool = False, csv_ids: bool = False
) -> GoldenCase:
    if not isinstance(raw, Mapping):
        kind = "JSON object" if where.index is None else "mapping"
        raise GoldenError(
            f"{where.at()}expected a {kind} with 'id' and 'query', got {type(raw).__name__}"
        )
    bad_keys = [k for k in raw if not isinstance(k, str)]
    if bad_keys:
        raise GoldenError(f"{where.at()}field names must be text, got {bad_keys[0]!r}")
    case_id = _case_id(raw, where)
    at = where.at(case_id)
    if "query" not in raw or raw["query"] is None:
        raise GoldenError(
            f"{at}case has no 'query' (missing required field(s): query); add the text "
            "to send to the target"
        )
    query = _text(raw["query"], f"{at}query")
    if not query.strip():
        raise GoldenError(f"{at}query is empty (missing required field(s): query)")
    relevant, grades = _relevance(raw.get("relevant"), where, case_id, csv_cell=csv_row)
    text, expected_ids = _expected(raw.get("expected"), where, case_id, ids_csv=csv_ids)
    # Ids given as `expected` stay readable there (0.2.0); GoldenCase copies them
    # into `relevant` and refuses a `relevant` that names other ids.
    expected = expected_ids if expected_ids is not None else text
    context = _context(raw, at)
    try:
        return GoldenCase(
            id=case_id,
            query=query,
            relevant=relevant,
            expected=expected,
            context=context,
            grades=grades,
        )
    except GoldenError as exc:
        raise GoldenError(f"{at}{exc}") from None


# --------------------------------------------------------------------------- formats


def load_jsonl(path: Path) -> GoldenSet:
    """One JSON object per line.  Blank lines and lines starting with ``#`` are skipped."""
    file = Path(path)
    text = _read_text(file)

    def cases() -> Iterable[tuple[GoldenCase, CaseWhere]]:
        for number, line in enumerate(text.splitlines(), start=1):
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            where = CaseWhere(file, number)
            yield build_case(_parse_json_line(stripped, where), where), where

    return collect_cases(cases(), file)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (write null or a string)")


def _parse_json_line(line: str, where: CaseWhere) -> Any:
    def unique_fields(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise GoldenError(
                    f"{where.at()}field {key!r} appears twice in one object; "
                    "JSON would silently keep only the last"
                )
            out[key] = value
        return out

    try:
        return _bounded.loads(
            line, object_pairs_hook=unique_fields, parse_constant=_reject_constant
        )
    except json.JSONDecodeError as exc:
        raise GoldenError(f"{where.at()}invalid JSON: {exc.msg} (column {exc.colno})") from None
    except GoldenError:
        raise
    except ValueError as exc:
        raise GoldenError(f"{where.at()}invalid JSON: {exc}") from None


def load_yaml(path: Path) -> GoldenSet:
    """A list of case mappings, or a mapping whose only key is ``cases:`` holding that list."""
    from evalkit._util import yaml_files as _yaml  # PyYAML only when a YAML file is read

    file = Path(path)
    doc = _yaml.parse(_read_text(file), str(file), GoldenError)
    data, node = doc.data, doc.node
    if data is None:
        return GoldenSet([], source=str(file))
    if isinstance(data, dict):
        extra = [str(k) for k in data if k != "cases"]
        if extra:
            key_nodes = _yaml.mapping_value_nodes(node)
            line = _yaml.line_of(key_nodes[extra[0]][0] if extra[0] in key_nodes else node)
            raise GoldenError(
                f"{file}:{line}: unknown top-level key {extra[0]!r}; expected a list of "
                "cases, or a mapping with only 'cases:'"
            )
        if "cases" not in data:
            raise GoldenError(f"{file}: the top-level mapping has no 'cases:' list")
        data = data["cases"]
        node = _yaml.mapping_value_nodes(node)["cases"][1]
        if data is None:
            return GoldenSet([], source=str(file))
    if not isinstance(data, list):
        raise GoldenError(
            f"{file}:{_yaml.line_of(node)}: expected a list of cases (or 'cases:' with a list), "
            f"got {type(data).__name__}"
        )
    item_nodes = _yaml.sequence_items(node)

    def cases() -> Iterable[tuple[GoldenCase, CaseWhere]]:
        for index, raw in enumerate(data):
            item = item_nodes[index] if index < len(item_nodes) else None
            where = CaseWhere(file, _yaml.line_of(item), index + 1)
            yield build_case(raw, where), where

    return collect_cases(cases(), file)


def load_csv(path: Path) -> GoldenSet:
    """Comma-separated with a header row; ``relevant`` holds ids separated by ``|``.

    Without a ``relevant`` column, ``expected`` holds the ``|``-separated ids
    instead (paired-evalkit 0.2.0's CSV).  Cells are text; ids and relevant ids
    are stripped of surrounding spaces, an empty ``expected`` means none, the
    answer metrics' list keys (``answers``, ``must_include``, ``must_not_include``)
    are ``|``-separated too (empty: not given), and other columns are kept as text.
    Graded relevance needs JSONL or YAML.
    """
    file = Path(path)
    text = _read_text(file)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise GoldenError(f"{file}:{reader.line_num}: malformed CSV header: {exc}") from None
    if header is None:
        return GoldenSet([], source=str(file))
    columns = [c.strip() for c in header]
    for number, name in enumerate(columns, start=1):
        if not name:
            raise GoldenError(f"{file}:1: CSV header column {number} has no name")
        if columns.index(name) != number - 1:
            raise GoldenError(f"{file}:1: CSV header repeats column {name!r}")
    for required in ("id", "query"):
        if required not in columns:
            raise GoldenError(
                f"{file}:1: CSV header has no {required!r} column (columns: {', '.join(columns)})"
            )

    # 0.2.0's CSV has no `relevant` column and carries the ids in `expected`.
    expected_ids = "relevant" not in columns

    def cases() -> Iterable[tuple[GoldenCase, CaseWhere]]:
        line_before = reader.line_num
        while True:
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                raise GoldenError(f"{file}:{line_before + 1}: malformed CSV: {exc}") from None
            where = CaseWhere(file, line_before + 1)
            line_before = reader.line_num
            if not row or all(cell.strip() == "" for cell in row):
                continue
            if len(row) != len(columns):
                more = "more" if len(row) > len(columns) else "fewer"
                raise GoldenError(
                    f"{where.at()}row has {len(row)} field(s) but the header has "
                    f"{len(columns)} ({', '.join(columns)}): {more} columns than headers"
                )
            raw: dict[str, Any] = dict(zip(columns, row, strict=True))
            raw["id"] = raw["id"].strip()
            _csv_answer_keys(raw)
            yield build_case(raw, where, csv_row=True, csv_ids=expected_ids), where

    return collect_cases(cases(), file)


def _csv_answer_keys(raw: dict[str, Any]) -> None:
    """The answer metrics' list keys in a CSV row: ``|``-separated, an empty cell is absent."""
    from evalkit.metrics.answer_keys import GRADED_ANSWER_KEY, PHRASE_KEYS

    for key in (*PHRASE_KEYS, GRADED_ANSWER_KEY):
        cell = raw.get(key)
        if not isinstance(cell, str):
            continue
        if not cell.strip():
            del raw[key]
        elif key != GRADED_ANSWER_KEY:
            raw[key] = [part.strip() for part in cell.split(CSV_RELEVANT_SEPARATOR)]


BUILTIN_LOADERS: dict[str, Loader] = {
    "jsonl": load_jsonl,
    "yaml": load_yaml,
    "yml": load_yaml,
    "csv": load_csv,
}


def _ensure_builtin_loaders() -> None:
    """Register the built-in loaders (once; again only if a registry reset dropped them)."""
    for ext, fn in BUILTIN_LOADERS.items():
        if get_loader(ext) is None:
            register_loader(ext)(fn)


_ensure_builtin_loaders()
