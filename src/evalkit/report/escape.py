"""Making untrusted text safe to show: in a terminal, in GitHub markdown, in HTML.

Case ids, queries, outputs, error messages, check ids, metric names and run names
all come from files or systems a pull request can change, and every one of them
ends up in a PR comment.  Three layers, applied in this order:

1. :func:`visible` (owned by :mod:`evalkit._util.visible`) — make the text *honest*:
   control and format characters (ANSI escapes, bidi overrides, zero-width
   characters) are shown as ``\\u202e`` instead of acting, and over-long text is
   cut with ``…`` *before* any escaping, so a cut can never split an entity or a tag.
2. :func:`md` — make it *inert* in GitHub-flavoured markdown: every character that
   could start markup is written as a numeric character reference (``|`` →
   ``&#124;``).  References decode to the literal character in every place we put
   text — table cells, list items, paragraphs and raw-HTML ``<summary>`` — so one
   escaper serves all of them.  Mentions and issue references are *not* markup:
   GitHub links them after rendering, on the decoded text, so an entity cannot
   stop them; an invisible character after ``@`` and ``#`` does (the fix Dependabot
   and Renovate use, with a word joiner rather than their zero-width space, so that
   ``recall@10`` is not broken across two lines of a narrow table cell).  Newlines
   become ``<br>``.
3. :func:`html_text` — for the HTML report: :func:`html.escape` on top of (1).

Code spans are deliberately not used for untrusted text: entities do not decode
inside them, and a ``|`` inside a code span still splits a table cell.
"""

from __future__ import annotations

import hashlib
import html
import re
from urllib.parse import quote, urlsplit

# One owner spells control characters out for every message, report and log line.
from evalkit._util.visible import ELLIPSIS, one_line, visible
from evalkit.errors import InputError

# U+2060 word joiner, written as a reference so it is visible in the source: invisible,
# not a letter or digit (so no mention or reference starts after it) and, unlike a
# zero-width space, not a place where a line may break.
WJ = "&#8288;"

# Characters that can start or end markdown/HTML constructs in GFM on GitHub, each
# replaced by a numeric reference.  ``$`` is GitHub's math delimiter, ``~`` strikethrough.
_MD_TABLE = {ord(ch): f"&#{ord(ch)};" for ch in "&<>\"'|`*_[]\\~$"}
_MD_TABLE[ord("@")] = "@" + WJ  # breaks @user and @org/team mentions
_MD_TABLE[ord("#")] = "#" + WJ  # breaks #123 and owner/repo#123 references
_MD_TABLE[ord("\n")] = "<br>"

_MARKER_OK = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_MARKER_BAD_CHAR = re.compile(r"[^A-Za-z0-9._-]")


def md(text: object, max_len: int | None = None) -> str:
    """Untrusted text made inert for GitHub markdown, tables and raw HTML alike."""
    return visible(text, max_len).translate(_MD_TABLE)


def html_text(text: object, max_len: int | None = None) -> str:
    """Untrusted text for HTML element content or a quoted attribute value."""
    return html.escape(visible(text, max_len), quote=True)


def marker_name(config_name: str) -> str:
    """A config name that cannot close or break the HTML comment it is written into.

    Names that are already plain (letters, digits, ``.``, ``_``, ``-``; up to 100
    characters; as the GitHub layer requires) are kept as they are.  Anything else is
    made plain and suffixed with a hash of the original, so two different names never
    share a marker (and so never overwrite each other's sticky comment).
    """
    if _MARKER_OK.fullmatch(config_name):
        return config_name
    plain = re.sub("-{2,}", "-", _MARKER_BAD_CHAR.sub("_", config_name))[:80] or "config"
    digest = hashlib.sha256(config_name.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{plain}~{digest}"


def safe_url(url: str) -> str:
    """An http(s) URL fit for a markdown link destination or an ``href``.

    Characters that could end the destination or the attribute are percent-encoded;
    any other scheme (``javascript:``, ``data:``) is refused.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError(
            f"details_url {url[:200]!r} must be an absolute http(s) URL "
            "(for example the workflow run's page)"
        )
    return quote(url, safe="/:?&=%#@!$*+,;~.-_")


__all__ = ["ELLIPSIS", "html_text", "marker_name", "md", "one_line", "safe_url", "visible"]
