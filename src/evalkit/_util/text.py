"""Decoding hand-written files: a bad byte is reported where it is."""

from __future__ import annotations

from collections.abc import Callable

from evalkit.errors import InputError


def decode_utf8(data: bytes, source: str, error: Callable[[str], InputError]) -> str:
    """``data`` as text (a leading BOM dropped); raise ``error("file:line: …")`` at a bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - line_start + 1
        raise error(
            f"{source}:{line}: not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset "
            f"{exc.start}, column {column}); save the file as UTF-8"
        ) from None
