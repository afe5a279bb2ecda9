"""Making untrusted text safe to show: in a terminal, in GitHub markdown, in HTML."""

from __future__ import annotations

import hashlib
import html
import re
from urllib.parse import quote, urlsplit

# One owner spells control characters out for every message, report and log line.
from evalkit._util.visible import one_line, visible
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
    """A config name that cannot close or break the HTML comment it is written into."""
    if _MARKER_OK.fullmatch(config_name):
        return config_name
    plain = re.sub("-{2,}", "-", _MARKER_BAD_CHAR.sub("_", config_name))[:80] or "config"
    digest = hashlib.sha256(config_name.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{plain}~{digest}"


def safe_url(url: str) -> str:
    """An http(s) URL fit for a markdown link destination or an ``href``."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError(
            f"details_url {url[:200]!r} must be an absolute http(s) URL "
            "(for example the workflow run's page)"
        )
    return quote(url, safe="/:?&=%#@!$*+,;~.-_")


__all__ = ["one_line", "visible"]
