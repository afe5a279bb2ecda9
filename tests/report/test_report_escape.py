"""Escaping untrusted text: each rule on its own."""

from __future__ import annotations

import pytest

from evalkit.errors import InputError
from evalkit.report.escape import html_text, marker_name, md, one_line, safe_url, visible

from . import mdcheck


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("a|b", "a&#124;b"),
        ("`code`", "&#96;code&#96;"),
        ("<script>", "&#60;script&#62;"),
        ("<!-- x -->", "&#60;!-- x --&#62;"),
        ("[t](http://x)", "&#91;t&#93;(http://x)"),
        ("*a* _b_ ~c~ $d$", "&#42;a&#42; &#95;b&#95; &#126;c&#126; &#36;d&#36;"),
        ("@octocat", "@&#8288;octocat"),
        ("fixes #123", "fixes #&#8288;123"),
        ("a&amp;b", "a&#38;amp;b"),
        ("back\\slash", "back&#92;slash"),
        ("two\nlines\r\nthree", "two<br>lines<br>three"),
    ],
)
def test_md_neutralises_each_construct(raw: str, escaped: str) -> None:
    assert md(raw) == escaped
    # ...and a markdown parser shows the original text back, as text.
    seen = mdcheck.visible_text(f"| {md(raw)} |\n|---|\n").strip()
    assert seen == raw.replace("\r\n", "\n")


def test_visible_spells_out_controls_and_caps_length() -> None:
    assert visible("a\x1b[31mb\u202ec\u200bd\x00") == "a\\x1b[31mb\\u202ec\\u200bd\\x00"
    assert visible("tab\there") == "tab here"
    assert visible("x" * 50, max_len=10) == "x" * 9 + "…"
    assert visible(123) == "123"
    assert visible("lone \udcff surrogate").encode() == b"lone \\udcff surrogate"
    assert one_line("a\nb") == "a ⏎ b"


def test_cut_happens_before_escaping_so_no_entity_is_split() -> None:
    out = md("|" * 20, max_len=5)
    assert out == "&#124;" * 4 + "…"


def test_html_text_escapes_for_element_and_attribute() -> None:
    assert html_text('<a href="x">\'&') == "&lt;a href=&quot;x&quot;&gt;&#x27;&amp;"


def test_marker_name() -> None:
    assert marker_name("evals-search") == "evals-search"
    assert marker_name("x" * 100) == "x" * 100
    long = marker_name("x" * 101)
    assert long.startswith("x" * 80 + "~")
    assert marker_name("a-->b") == "a-_b~" + marker_name("a-->b").split("~")[1]
    assert marker_name("").startswith("config~")


@pytest.mark.parametrize("url", ["javascript:alert(1)", "data:text/html,x", "/relative", "http://"])
def test_safe_url_refuses_non_http(url: str) -> None:
    with pytest.raises(InputError, match="must be an absolute http\\(s\\) URL"):
        safe_url(url)


def test_safe_url_encodes_what_could_end_a_link() -> None:
    assert safe_url('https://h/p a(b)"<c>`') == "https://h/p%20a%28b%29%22%3Cc%3E%60"
    assert safe_url("https://h/runs/1?x=1#frag") == "https://h/runs/1?x=1#frag"
