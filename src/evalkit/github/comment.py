"""One sticky PR comment per config, found by a hidden marker and updated in place."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from evalkit._spec.config import validate_config_name
from evalkit.github.client import DEFAULT_RETRY, GitHubApiError, RetryPolicy, call_github

if TYPE_CHECKING:
    from github.Repository import Repository

# GitHub rejects a comment body of 65,536 characters or more.
MAX_COMMENT_CHARS = 65_535
_ANY_MARKER = re.compile(r"<!--\s*evalkit report config=[^>]*-->\n?")
# Any "evalkit report config=" left after marker removal is a half-marker that could
# re-form one with its neighbours: break the phrase itself.
_MARKER_WORDS = re.compile(r"evalkit\s+report\s+config=", re.IGNORECASE)
# "@name" wherever GitHub would link it. A zero-width space after "@" defuses it; a
# backtick before "@" no longer protects (a lone backtick opens no code span).
_MENTION = re.compile(r"(?<![A-Za-z0-9])@(?=[A-Za-z0-9])")
# "org/repo#12" and "org/repo@sha" link (and notify) across repositories.
_CROSS_REF = re.compile(r"(?<![\w/.-])([A-Za-z0-9][\w.-]*/[\w.-]+)(#|@)(?=\w)")
# Links and images from a fork's text render as text, defused like mentions (a zero-width
# space where the construct needs two characters side by side), not left to GitHub's
# sanitiser: an inline link or image (`](`), an image's `![`, a reference definition
# (`[x]: url`), a bare URL GFM would link (`https://`, `www.`), and any HTML tag but the
# formatting ones a report uses (`<img>`, `<a href>`, `<picture>`...).
_INLINE_LINK = re.compile(r"\](?=\()")
_IMAGE = re.compile(r"!(?=\[)")
_REFERENCE_DEFINITION = re.compile(r"^( {0,3}\[[^\]\n]*\]):", re.MULTILINE)
_BARE_URL = re.compile(r"(?i)(https?|ftp|javascript|data|vbscript|file):(?=/)|(www)\.")
_FORMATTING_TAGS = (
    "b|blockquote|br|code|del|details|div|em|h[1-6]|hr|i|ins|kbd|li|ol|p|pre|s|span|strong|"
    "sub|summary|sup|table|tbody|td|th|thead|tr|ul|wbr"
)
_OTHER_TAG = re.compile(rf"<(?=/?[A-Za-z])(?!/?(?:{_FORMATTING_TAGS})\b)", re.IGNORECASE)
# Each pass decodes one layer of entities (&amp;#64; -> &#64; -> @); bodies that keep
# changing past this many passes are reduced to plain text.
_SANITISE_ROUNDS = 10
GITHUB_ACTIONS_BOT = "github-actions[bot]"
_TRUNCATION_NOTE = "\n\n> **evalkit:** comment truncated to GitHub's size limit.\n"


def marker_for(config_name: str) -> str:
    """The hidden line that identifies the sticky comment of ``config_name``."""
    return f"<!-- evalkit report config={validate_config_name(config_name)} -->"


def prepare_body(markdown: str, config_name: str) -> str:
    """The body to post: our marker on its first line, capped to GitHub's limit."""
    marker = marker_for(config_name)
    if not _first_line_is(markdown, marker):
        markdown = f"{marker}\n{markdown}"
    if len(markdown) > MAX_COMMENT_CHARS:
        room = MAX_COMMENT_CHARS - len(_TRUNCATION_NOTE)
        head = markdown[:room]
        cut = head.rfind("\n")
        markdown = (head[: cut + 1] if cut > 0 else head) + _TRUNCATION_NOTE
    return markdown


def _sanitise_once(text: str) -> str:
    text = html.unescape(text)
    text = _ANY_MARKER.sub("", text)
    text = _MARKER_WORDS.sub("evalkit report config\u200b=", text)
    text = _MENTION.sub("@\u200b", text)
    text = _INLINE_LINK.sub("]\u200b", text)
    text = _IMAGE.sub("!\u200b", text)
    text = _REFERENCE_DEFINITION.sub("\\1\u200b:", text)
    text = _BARE_URL.sub(
        lambda m: f"{m.group(1)}:\u200b" if m.group(1) else f"{m.group(2)}\u200b.", text
    )
    text = _OTHER_TAG.sub("<\u200b", text)
    return _CROSS_REF.sub(lambda m: f"{m.group(1)}{m.group(2)}\u200b", text)


def sanitize_untrusted_body(markdown: str, config_name: str) -> str:
    """Make a body produced by an untrusted (fork) run safe to post with a write token."""
    body = markdown
    for _ in range(_SANITISE_ROUNDS):
        cleaned = _sanitise_once(body)
        if cleaned == body:
            break
        body = cleaned
    else:
        # Still changing after many rounds: hostile; keep only what is plainly text.
        body = re.sub(r"[<>&@#]", "", body)
    return prepare_body(f"{marker_for(config_name)}\n{body}", config_name)


@dataclass(frozen=True)
class CommentResult:
    action: Literal["created", "updated", "unchanged"]
    comment_id: int
    url: str


def _first_line_is(body: str, marker: str) -> bool:
    """Whether ``marker`` is ``body``'s first line: the only place a marker counts, so one
    quoted further down (in a case id, a check's message, a fork's text) names nothing."""
    return body.partition("\n")[0].rstrip("\r") == marker


def _is_ours(comment: Any, marker: str, identity: str) -> bool:
    # Attributes and the listed JSON (_rawData: "minimized" is no attribute of PyGithub's),
    # not .raw_data: on a listed (lazy) comment raw_data would fetch it again.
    body, user, raw = comment.body, comment.user, getattr(comment, "_rawData", None)
    if not isinstance(body, str) or not _first_line_is(body, marker) or user is None:
        return False
    minimized = isinstance(raw, dict) and bool(raw.get("minimized"))
    return not minimized and str(user.login).lower() == identity.lower()


def upsert_sticky_comment(
    repo: Repository,
    pr_number: int,
    markdown: str,
    *,
    config_name: str,
    identity: str = GITHUB_ACTIONS_BOT,
    retry: RetryPolicy = DEFAULT_RETRY,
) -> CommentResult:
    """Create the PR's evalkit comment for ``config_name``, or update it in place.

    ``identity`` is the login whose comments are ours.
    """
    body = prepare_body(markdown, config_name)
    marker = marker_for(config_name)
    issue = repo.get_issue(pr_number)  # lazy: no request
    once = replace(retry, attempts=1)

    for attempt in range(1, retry.attempts + 1):
        comments: list[Any] = call_github(
            f"list comments of PR #{pr_number}",
            lambda: list(issue.get_comments()),
            retry=retry,
        )
        ours = [c for c in comments if _is_ours(c, marker, identity)]
        if ours:
            break
        try:
            # Once, not retried blind: a 5xx may come after GitHub stored the comment.
            created: Any = call_github(
                f"create a comment on PR #{pr_number}",
                lambda: issue.create_comment(body),
                retry=once,
            )
        except GitHubApiError as exc:
            if exc.status is not None and exc.status < 500:
                raise
            if attempt < retry.attempts:
                retry.sleep(retry.delay(attempt))
                continue  # list again: the failed create may have landed
            first = str(exc).split(" (gave up after")[0]
            raise GitHubApiError(
                f"{first} (gave up after {attempt} attempts, listing the comments before each)",
                status=exc.status,
            ) from None
        return CommentResult("created", int(created.id), str(created.html_url))
    # Oldest first: if a past race left two, keep updating the first one.
    existing = min(ours, key=lambda c: int(c.id))
    comment_id, url = int(existing.id), str(existing.html_url)
    if existing.body == body:
        return CommentResult("unchanged", comment_id, url)
    call_github(
        f"update comment {comment_id} on PR #{pr_number}",
        lambda: existing.edit(body),
        retry=retry,
    )
    return CommentResult("updated", comment_id, url)
