"""The one owner of "untrusted text, made honest" (evalkit._util.visible), brute-forced.

Every code point a terminal or a log could obey (C0, C1, DEL, format and separator
characters, lone surrogates) comes out spelled, never raw; everything else is kept.
"""

from __future__ import annotations

import io
import unicodedata

from evalkit._util.visible import one_line, visible
from evalkit.github.outputs import Annotation, Console
from evalkit.report import escape

OBEYED = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def _acting(text: str) -> list[str]:
    return [ch for ch in text if ch != "\n" and unicodedata.category(ch) in OBEYED]


def test_no_code_point_that_acts_survives_and_every_other_is_kept() -> None:
    for code in range(0x110000):
        ch = chr(code)
        shown = visible(f"a{ch}b")
        assert _acting(shown) == [], hex(code)
        if ch in "\r\n":
            assert shown == "a\nb"
        elif ch != "\t" and unicodedata.category(ch) in OBEYED:
            spelled = f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
            assert shown == f"a{spelled}b", hex(code)
        elif ch != "\t":
            assert shown == f"a{ch}b", hex(code)


def test_osc_sequences_are_spelled_out_on_one_line() -> None:
    text = "\x1b]52;c;ZXZpbA==\x07\n\x1b]8;;https://x/\x1b\\x\x00\x7f\x9b"
    assert one_line(text) == (
        "\\x1b]52;c;ZXZpbA==\\x07 ⏎ \\x1b]8;;https://x/\\x1b\\x\\x00\\x7f\\x9b"
    )


def test_the_report_escapers_use_the_same_owner() -> None:
    assert escape.visible is visible
    assert escape.one_line is one_line


def test_the_step_log_spells_out_what_it_prints() -> None:
    stream = io.StringIO()
    console = Console(stream)
    console.annotate(Annotation("error", "bad \x1b[2J", title="t\x07"))
    assert _acting(stream.getvalue()) == []
    assert "title=t\\x07::bad \\x1b[2J" in stream.getvalue()
