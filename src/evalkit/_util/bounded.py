"""Reading files nobody vetted, within bounds: size, gzip expansion and nesting depth."""

from __future__ import annotations

import errno
import gc
import json
import os
import re
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from evalkit._util.limits import MAX_ARTEFACT_BYTES
from evalkit.errors import ArtifactError, ConfigError

MAX_DEPTH = 100
"""Deepest nesting of lists/objects accepted in any JSON or YAML input."""

DEFAULT_MAX_INPUT_MB = 512
ENV_MAX_INPUT_MB = "EVALKIT_MAX_INPUT_MB"

_MB = 1024 * 1024


def max_input_bytes() -> int:
    """The size limit for one input file (and for its decompressed content)."""
    raw = os.environ.get(ENV_MAX_INPUT_MB, "").strip()
    if not raw:
        return DEFAULT_MAX_INPUT_MB * _MB
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0 or value != value or value == float("inf"):
        raise ConfigError(
            f"{ENV_MAX_INPUT_MB}={raw!r}: expected a positive number of megabytes, "
            f"e.g. {DEFAULT_MAX_INPUT_MB}"
        )
    return max(1, int(value * _MB))


MAX_LINE_MB = 16


def max_line_bytes() -> int:
    """The longest line a line-by-line reader (TREC, corpus JSONL) accepts."""
    return min(MAX_LINE_MB * _MB, max_input_bytes())


def line_too_long(source: str, line_no: int) -> str:
    """The message for a line over :func:`max_line_bytes` (a gzip bomb without newlines)."""
    return (
        f"{source}:{line_no}: line is longer than {_size_text(max_line_bytes())}; "
        f"the file is not line-oriented text (set {ENV_MAX_INPUT_MB} only if it truly is)"
    )


def _size_text(n: int) -> str:
    return f"{n / _MB:.1f} MB" if n >= _MB else f"{n} bytes"


class InputTooLarge(OSError):
    """A file (or its decompressed content) is over :func:`max_input_bytes`."""

    def __init__(self, path: str | os.PathLike[str], what: str, limit: int) -> None:
        reason = (
            f"{what} is over the {_size_text(limit)} input limit; "
            f"set {ENV_MAX_INPUT_MB} to a larger number of megabytes if it is meant to be this big"
        )
        super().__init__(errno.EFBIG, reason, str(path))
        self.reason = reason

    def __str__(self) -> str:  # callers name the file themselves
        return self.reason


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """``Path.read_bytes`` that stops at the size limit (raising :class:`InputTooLarge`)."""
    limit = max_input_bytes()
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            raise InputTooLarge(path, f"the file ({_size_text(size)})", limit)
        data = handle.read(limit + 1)  # not regular (a pipe, /dev/zero) or still growing
    if len(data) > limit:
        raise InputTooLarge(path, "the file", limit)
    return data


def read_text(path: str | os.PathLike[str], encoding: str = "utf-8") -> str:
    """``Path.read_text`` (universal newlines) within the size limit."""
    text = read_bytes(path).decode(encoding)
    return text.replace("\r\n", "\n").replace("\r", "\n")


GZIP_MAGIC = b"\x1f\x8b"


def gunzip(data: bytes, path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """Decompress gzip ``data`` (every member) without inflating past ``limit`` bytes."""
    limit = max_input_bytes() if limit is None else limit
    out: list[bytes] = []
    total = 0
    rest = data
    while rest:
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        chunk = inflater.decompress(rest, limit + 1 - total)
        total += len(chunk)
        if total > limit or inflater.unconsumed_tail:
            raise InputTooLarge(path, "the decompressed content", limit)
        if not inflater.eof:
            raise EOFError("compressed file ended before the end-of-stream marker was reached")
        out.append(chunk)
        rest = inflater.unused_data
        if rest and not rest.startswith(GZIP_MAGIC):
            if rest.strip(b"\x00"):
                raise zlib.error("trailing bytes after the gzip data are not another gzip member")
            break  # zero padding (tape blocks) is allowed after the last member
    return b"".join(out)


def gunzip_bounded(data: bytes, origin: str, limit: int = MAX_ARTEFACT_BYTES) -> bytes:
    """Decompress gzip ``data`` but stop past ``limit`` bytes: a gzip bomb never expands."""
    try:
        return gunzip(data, origin, limit)
    except InputTooLarge:
        raise ArtifactError(f"{origin}: decompresses to more than {limit} bytes") from None
    except zlib.error as exc:
        raise ArtifactError(f"{origin}: not a readable gzip file ({exc})") from None
    except EOFError:
        raise ArtifactError(f"{origin}: not a readable gzip file (truncated)") from None


# ----------------------------------------------------------------------------- JSON


class JsonRefused(json.JSONDecodeError):
    """JSON that parses but is refused (too deep, not text): never a torn write."""


class JsonTooDeep(JsonRefused):
    """JSON nested deeper than :data:`MAX_DEPTH` (reported like a syntax error)."""


class JsonNotUnicode(JsonRefused):
    """A ``\\uD800``-style escape of half a surrogate pair: JSON, but not text."""


# A high surrogate escape followed by a low one is one character; anything else is half.
_SURROGATE = re.compile(
    r"\\u[dD][89aAbB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[dD][89a-fA-F][0-9a-fA-F]{2}"
)


def _lone_surrogate_at(text: str) -> int | None:
    """Offset of the first escape of an unpaired surrogate, if any."""
    if "\\u" not in text:
        return None
    return next((m.start() for m in _SURROGATE.finditer(text) if len(m.group()) == 6), None)


def _is_text(value: Any) -> bool:
    """Whether every string in ``value`` encodes as UTF-8 (no lone surrogates)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


def _too_deep_at(text: str) -> int:
    """Offset of the first bracket that opens level ``MAX_DEPTH + 1`` (0 if none)."""
    depth = 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return match.start()
        elif token in "]}":
            depth -= 1
    return 0


# The types a parsed JSON/YAML value holds that cannot contain another value.
_LEAVES = frozenset({str, int, float, bool, type(None)})


@contextmanager
def paused_gc(*, keep: bool = False) -> Iterator[None]:
    """Suspend the cyclic garbage collector while building millions of objects; ``keep``
    (code that returns what it builds, a run read from a file): the new objects join the
    collector's oldest generation when it resumes."""
    was_enabled = gc.isenabled()
    if was_enabled and keep:
        gc.collect(1)
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if keep and gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def check_depth(value: Any, *, depth: int = 1) -> bool:
    """True when ``value`` (parsed JSON/YAML data) is within :data:`MAX_DEPTH`.

    ``depth`` is the level ``value`` itself sits at, for a part of a bigger document.
    """
    stack: list[tuple[Any, int]] = [(value, depth)] if isinstance(value, dict | list) else []
    leaves = _LEAVES.issuperset
    while stack:
        item, depth = stack.pop()
        if item and depth > MAX_DEPTH:
            return False
        children = item.values() if isinstance(item, dict) else item
        # Most containers (an artefact's ids, metrics, meta) hold only scalars: the
        # type test runs in C over them, and only mixed containers take the loop.
        if leaves(map(type, children)):
            continue
        for child in children:
            if isinstance(child, dict | list) and child:
                stack.append((child, depth + 1))
    return True


def loads(
    data: str | bytes,
    *,
    parse_constant: Callable[[str], Any] | None = None,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
    walk: bool = True,
) -> Any:
    """``json.loads`` that refuses nesting deeper than :data:`MAX_DEPTH`."""
    text = data.decode("utf-8") if isinstance(data, bytes | bytearray) else data
    with paused_gc():
        try:
            value = json.loads(
                text, parse_constant=parse_constant, object_pairs_hook=object_pairs_hook
            )
        except RecursionError:
            value = None
            deep = True
        else:
            deep = walk and not check_depth(value)
    if deep:
        raise JsonTooDeep(f"nested deeper than {MAX_DEPTH} levels", text, _too_deep_at(text))
    lone = _lone_surrogate_at(text)
    if lone is not None and not _is_text(value):
        # Python would carry it until printing or writing the text fails far from here.
        raise JsonNotUnicode(
            f"{text[lone : lone + 6]} is half of a UTF-16 surrogate pair, not a character",
            text,
            lone,
        )
    return value
