"""Untrusted text made honest before anyone shows it: the one owner of that decision."""

from __future__ import annotations

import unicodedata

ELLIPSIS = "…"

_KEEP = frozenset("\n")
# Control (C0, C1, DEL), format (bidi, zero-width), separator and lone-surrogate characters.
_SPELLED = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def _shown(ch: str) -> str:
    """A control or format character spelled out, so it can be seen and not obeyed."""
    if ch == "\t":
        return " "
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: object, max_len: int | None = None) -> str:
    """``text`` as one honest string: controls spelled out, newlines kept, length capped."""
    s = text if isinstance(text, str) else str(text)
    s = s.replace("\r\n", "\n").replace("\r", "\n")
    if max_len is not None and len(s) > max_len:
        s = s[: max(max_len - 1, 0)] + ELLIPSIS
    if s.isprintable():
        return s
    return "".join(
        ch if ch in _KEEP or ch == " " or unicodedata.category(ch) not in _SPELLED else _shown(ch)
        for ch in s
    )


def one_line(text: object, max_len: int | None = None) -> str:
    """Like :func:`visible`, with newlines shown as ``⏎`` (for terminals and summaries)."""
    return visible(text, max_len).replace("\n", " ⏎ ")
