"""One sticky PR comment per config, found by a hidden marker and updated in place.

The marker ``<!-- evalkit report config=<name> -->`` is the comment's identity: the
markdown reporter puts it in the body, and we look for it across *every* page of the
PR's comments (a busy PR has more than one page). Only comments written by a bot (or
by the login given as ``comment-author``) count, so a person quoting the marker cannot
make the action overwrite their comment. An unchanged body is not re-sent: no
notification noise, no edit history.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from evalkit.github.baseline import validate_config_name
from evalkit.github.client import DEFAULT_RETRY, RetryPolicy, call_github

if TYPE_CHECKING:
    from github.Repository import Repository

# GitHub rejects a comment body of 65,536 characters or more.
MAX_COMMENT_CHARS = 65_535
_ANY_MARKER = re.compile(r"<!--\s*evalkit report config=[^>]*-->\n?")
_MENTION = re.compile(r"(?<![\w`])@(?=[A-Za-z0-9])")
_TRUNCATION_NOTE = "\n\n> **evalkit:** comment truncated to GitHub's size limit.\n"


def marker_for(config_name: str) -> str:
    """The hidden line that identifies the sticky comment of ``config_name``."""
    return f"<!-- evalkit report config={validate_config_name(config_name)} -->"


def prepare_body(markdown: str, config_name: str) -> str:
    """The body to post: exactly one marker (ours, first line), capped to GitHub's limit."""
    marker = marker_for(config_name)
    if marker not in markdown:
        markdown = f"{marker}\n{markdown}"
    if len(markdown) > MAX_COMMENT_CHARS:
        room = MAX_COMMENT_CHARS - len(_TRUNCATION_NOTE)
        head = markdown[:room]
        cut = head.rfind("\n")
        markdown = (head[: cut + 1] if cut > 0 else head) + _TRUNCATION_NOTE
    return markdown


def sanitize_untrusted_body(markdown: str, config_name: str) -> str:
    """Make a body produced by an untrusted (fork) run safe to post with a write token.

    Any evalkit marker in it is removed and ours put first, so a fork cannot aim the post
    at another config's comment; ``@mentions`` are defused so it cannot page people.
    """
    body = _ANY_MARKER.sub("", markdown)
    body = _MENTION.sub("@\u200b", body)
    return prepare_body(f"{marker_for(config_name)}\n{body}", config_name)


@dataclass(frozen=True)
class CommentResult:
    action: Literal["created", "updated", "unchanged"]
    comment_id: int
    url: str


def _is_ours(comment: Any, marker: str, author_login: str | None) -> bool:
    # Attributes, not .raw_data: on a listed (lazy) comment raw_data would fetch it again.
    body = comment.body
    if not isinstance(body, str) or marker not in body:
        return False
    user = comment.user
    if user is None:
        return False
    if author_login:
        return bool(user.login == author_login)
    return bool(user.type == "Bot")


def upsert_sticky_comment(
    repo: Repository,
    pr_number: int,
    markdown: str,
    *,
    config_name: str,
    author_login: str | None = None,
    retry: RetryPolicy = DEFAULT_RETRY,
) -> CommentResult:
    """Create the PR's evalkit comment for ``config_name``, or update it in place."""
    body = prepare_body(markdown, config_name)
    marker = marker_for(config_name)
    issue = repo.get_issue(pr_number)  # lazy: no request

    comments: list[Any] = call_github(
        f"list comments of PR #{pr_number}",
        lambda: list(issue.get_comments()),
        retry=retry,
    )
    ours = [c for c in comments if _is_ours(c, marker, author_login)]
    if not ours:
        created: Any = call_github(
            f"create a comment on PR #{pr_number}",
            lambda: issue.create_comment(body),
            retry=retry,
        )
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


__all__ = [
    "MAX_COMMENT_CHARS",
    "CommentResult",
    "marker_for",
    "prepare_body",
    "sanitize_untrusted_body",
    "upsert_sticky_comment",
]
