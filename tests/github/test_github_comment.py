"""The sticky PR comment, through the real PyGithub client and the fake GitHub."""

from __future__ import annotations

import html
import random
import re
from typing import Any

import pytest
from fake_github import (  # noqa: F401  (the *_fixture names register fixtures)
    FakeGitHub,
    fake_github_fixture,
    github_factory_for_tests,
)

from evalkit.errors import ConfigError
from evalkit.github.client import NO_DELAY, GitHubApiError, GitHubPermissionError
from evalkit.github.comment import (
    MAX_COMMENT_CHARS,
    marker_for,
    prepare_body,
    sanitize_untrusted_body,
    upsert_sticky_comment,
)

PR = 7


def repo_of(fake: FakeGitHub) -> Any:
    return github_factory_for_tests(fake.api_url, fake.token).get_repo(fake.full_name)


def report(text: str, name: str = "evalkit") -> str:
    return f"{marker_for(name)}\n### evalkit: {text}\n"


def test_github_comment_marker_format_is_the_agreed_one() -> None:
    assert marker_for("evals-search") == "<!-- evalkit report config=evals-search -->"
    with pytest.raises(ConfigError, match="config name 'a b'"):
        marker_for("a b")


def test_github_comment_created_then_updated_in_place(fake_github: FakeGitHub) -> None:
    repo = repo_of(fake_github)
    first = upsert_sticky_comment(repo, PR, report("pass"), config_name="evalkit", retry=NO_DELAY)
    second = upsert_sticky_comment(repo, PR, report("fail"), config_name="evalkit", retry=NO_DELAY)
    assert (first.action, second.action) == ("created", "updated")
    assert first.comment_id == second.comment_id
    assert fake_github.comment_bodies(PR) == [report("fail")]


def test_github_comment_unchanged_body_is_not_rewritten(fake_github: FakeGitHub) -> None:
    repo = repo_of(fake_github)
    upsert_sticky_comment(repo, PR, report("pass"), config_name="evalkit", retry=NO_DELAY)
    again = upsert_sticky_comment(repo, PR, report("pass"), config_name="evalkit", retry=NO_DELAY)
    assert again.action == "unchanged"
    assert fake_github.api_calls("PATCH") == []


def test_github_comment_found_on_a_later_page(fake_github: FakeGitHub) -> None:
    fake_github.max_per_page = 3
    for i in range(7):
        fake_github.add_comment(PR, f"human comment {i}")
    ours = fake_github.add_comment(PR, report("old"), login="github-actions[bot]", kind="Bot")
    for i in range(4):
        fake_github.add_comment(PR, f"later comment {i}")
    result = upsert_sticky_comment(
        repo_of(fake_github), PR, report("new"), config_name="evalkit", retry=NO_DELAY
    )
    assert (result.action, result.comment_id) == ("updated", ours["id"])
    pages = [r.query.get("page", ["1"])[0] for r in fake_github.api_calls("GET", "/comments")]
    assert pages == ["1", "2", "3", "4"]
    assert len(fake_github.comments[PR]) == 12


def test_github_comment_ignores_marker_in_a_human_comment(fake_github: FakeGitHub) -> None:
    quoted = fake_github.add_comment(PR, f"look at this: {report('pass')}", login="mallory")
    result = upsert_sticky_comment(
        repo_of(fake_github), PR, report("fail"), config_name="evalkit", retry=NO_DELAY
    )
    assert result.action == "created"
    assert quoted["body"].startswith("look at this")


def test_github_comment_one_comment_per_config(fake_github: FakeGitHub) -> None:
    repo = repo_of(fake_github)
    upsert_sticky_comment(repo, PR, report("a", "search"), config_name="search", retry=NO_DELAY)
    upsert_sticky_comment(repo, PR, report("b", "rag"), config_name="rag", retry=NO_DELAY)
    upsert_sticky_comment(repo, PR, report("c", "search"), config_name="search", retry=NO_DELAY)
    assert fake_github.comment_bodies(PR) == [report("c", "search"), report("b", "rag")]


def test_github_comment_marker_counts_only_on_the_first_line(fake_github: FakeGitHub) -> None:
    # A marker quoted further down one config's comment (a case id, a check's message)
    # must not make another config overwrite that comment.
    repo = repo_of(fake_github)
    smuggled = report("a", "search") + f"case note:\n{marker_for('rag')}\n"
    upsert_sticky_comment(repo, PR, smuggled, config_name="search", retry=NO_DELAY)
    result = upsert_sticky_comment(repo, PR, report("b", "rag"), config_name="rag", retry=NO_DELAY)
    assert result.action == "created"
    assert fake_github.comment_bodies(PR) == [smuggled, report("b", "rag")]


def test_github_comment_a_body_whose_marker_is_not_first_gets_it_first() -> None:
    body = prepare_body(f"### evalkit: pass\n{marker_for('evalkit')}\n", "evalkit")
    assert body.startswith(marker_for("evalkit") + "\n### evalkit: pass")


def test_github_comment_author_login_filter(fake_github: FakeGitHub) -> None:
    fake_github.add_comment(PR, report("old"), login="ci-user", kind="User")
    result = upsert_sticky_comment(
        repo_of(fake_github),
        PR,
        report("new"),
        config_name="evalkit",
        identity="ci-user",
        retry=NO_DELAY,
    )
    assert result.action == "updated"


def test_github_comment_403_is_a_permission_error(fake_github: FakeGitHub) -> None:
    fake_github.fail("POST", r"/comments$", 403, message="Resource not accessible by integration")
    with pytest.raises(GitHubPermissionError, match=r"create a comment on PR #7.*403"):
        upsert_sticky_comment(
            repo_of(fake_github), PR, report("x"), config_name="evalkit", retry=NO_DELAY
        )


def test_github_comment_5xx_is_retried_boundedly(fake_github: FakeGitHub) -> None:
    fake_github.fail("GET", r"/comments$", 500, times=2)
    result = upsert_sticky_comment(
        repo_of(fake_github), PR, report("x"), config_name="evalkit", retry=NO_DELAY
    )
    assert result.action == "created"
    fake_github.fail("PATCH", r"/issues/comments/\d+$", 502, times=5)
    with pytest.raises(GitHubApiError, match=r"update comment .*502.*gave up after 3"):
        upsert_sticky_comment(
            repo_of(fake_github), PR, report("y"), config_name="evalkit", retry=NO_DELAY
        )
    assert len(fake_github.api_calls("PATCH")) == 3


def test_github_comment_body_is_capped_and_keeps_marker() -> None:
    body = prepare_body("x" * 70_000, "evalkit")
    assert len(body) <= MAX_COMMENT_CHARS
    assert body.startswith(marker_for("evalkit"))
    assert body.endswith("comment truncated to GitHub's size limit.\n")


def test_github_comment_untrusted_body_cannot_retarget_or_mention() -> None:
    hostile = f"{marker_for('other')}\nping @octo-org/admins and @alice, not `@code` or a@b.c\n"
    safe = sanitize_untrusted_body(hostile, "evalkit")
    assert safe.startswith(marker_for("evalkit") + "\n")
    assert marker_for("other") not in safe
    assert "@octo-org" not in safe
    assert "@alice" not in safe
    assert "@\u200bocto-org/admins" in safe
    assert "`@\u200bcode`" in safe  # a lone backtick opens no code span: defused too
    assert "a@b.c" in safe


MENTION = re.compile(r"(?<![A-Za-z0-9])@[A-Za-z0-9]")
CROSS_REF = re.compile(r"(?<![\w/.-])[A-Za-z0-9][\w.-]*/[\w.-]+[#@]\w")
ANY_MARKER = re.compile(r"<!--\s*evalkit report config=[^>]*-->")


def rendered(text: str) -> str:
    """Roughly what GitHub links after rendering: entities decoded, repeatedly."""
    for _ in range(5):
        text = html.unescape(text)
    return text


@pytest.mark.parametrize(
    "hostile",
    [
        "hi &#64;alice",
        "hi &#x40;alice",
        "hi &commat;alice",
        "hi &amp;#64;alice",  # two layers of entities
        "a lone ` then @alice",
        "see octo-org/secret-repo#12 and octo/widgets@deadbeef",
        "<!-<!-- evalkit report config=a -->- evalkit report config=other -->",
        "&lt;!-- evalkit report config=other --&gt;",
        "<!-- evalkit report config=x<!-- evalkit report config=y -->-->",
    ],
)
def test_github_comment_sanitise_defuses_hidden_mentions_refs_and_markers(hostile: str) -> None:
    safe = sanitize_untrusted_body(hostile, "evalkit")
    rest = rendered(safe.removeprefix(marker_for("evalkit") + "\n"))
    assert not MENTION.search(rest), rest
    assert not CROSS_REF.search(rest), rest
    assert not ANY_MARKER.search(rest), rest
    assert "evalkit report config=other" not in rest


LINK_OR_IMAGE = re.compile(
    r"\]\(|!\[|<(?!/?(?:details|summary|sub|br)\b)/?[A-Za-z]|https?://|www\."
    r"|^ {0,3}\[[^\]\n]*\]:",
    re.IGNORECASE | re.MULTILINE,
)


@pytest.mark.parametrize(
    "hostile",
    [
        '<img src="https://evil.example/t.png" onerror="alert(1)">',
        "![tracker](https://evil.example/pixel.gif)",
        "[click me](javascript:alert(document.cookie))",
        '<a href="javascript:alert(1)">x</a>',
        "&lt;img src=x&gt; and &#33;[i](u) and &#91;a&#93;(b)",  # entities decoded first
        "[ref][1]\n\n[1]: https://evil.example/",
        "<https://evil.example/> and https://evil.example/ and www.evil.example",
        "<picture><source srcset=https://e/x></picture><IMG SRC=x>",
    ],
)
def test_github_comment_sanitise_defuses_links_and_images(hostile: str) -> None:
    safe = sanitize_untrusted_body(hostile, "evalkit")
    rest = rendered(safe.removeprefix(marker_for("evalkit") + "\n"))
    assert not LINK_OR_IMAGE.search(rest), rest
    assert rest.replace("\u200b", "") == rendered(hostile)  # shown as text, not dropped


def test_github_comment_a_forks_links_reach_github_as_text(fake_github: FakeGitHub) -> None:
    fork = "### evalkit: PASS\n<img src=x>\n![i](https://e/p.gif)\n[c](javascript:alert(1))\n"
    safe = sanitize_untrusted_body(fork, "evalkit")
    upsert_sticky_comment(repo_of(fake_github), PR, safe, config_name="evalkit", retry=NO_DELAY)
    (posted,) = fake_github.comment_bodies(PR)
    assert posted.startswith(marker_for("evalkit") + "\n")
    assert not LINK_OR_IMAGE.search(rendered(posted.split("\n", 1)[1])), posted
    # what a report of ours uses is left working
    kept = sanitize_untrusted_body("<details><summary>s</summary><sub>x</sub><br></details>", "e")
    assert kept.endswith("<details><summary>s</summary><sub>x</sub><br></details>")


def test_github_comment_sanitise_reaches_a_fixed_point_on_generated_bodies() -> None:
    pieces = [
        "<!--",
        "-->",
        "<!-",
        "- ",
        "evalkit report config=",
        "other",
        "@",
        "&#64;",
        "&amp;",
        "&commat;",
        "`",
        "org/repo",
        "#",
        "1",
        "alice",
        " ",
        "\n",
        "&lt;",
        "&gt;",
        "x",
        "](",
        "![",
        "[",
        "]:",
        "<img",
        "<a href=",
        "https://",
        "www.",
        "javascript:",
        "&#33;",
        "&#91;",
    ]
    rng = random.Random(13)
    for _ in range(2000):
        body = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 30)))
        safe = sanitize_untrusted_body(body, "evalkit")
        rest = safe.removeprefix(marker_for("evalkit") + "\n")
        # Sanitising again changes nothing, and nothing dangerous survives rendering.
        assert sanitize_untrusted_body(rest, "evalkit") == safe, body
        shown = rendered(rest)
        assert not MENTION.search(shown), body
        assert not CROSS_REF.search(shown), body
        assert not ANY_MARKER.search(shown), body
        assert not LINK_OR_IMAGE.search(shown), body


def test_github_comment_identity_ignores_other_bots_and_minimized(fake_github: FakeGitHub) -> None:
    fake_github.add_comment(PR, report("another bot"), login="renovate[bot]", kind="Bot")
    fake_github.add_comment(
        PR, report("hidden"), login="github-actions[bot]", kind="Bot", minimized="outdated"
    )
    result = upsert_sticky_comment(
        repo_of(fake_github), PR, report("ours"), config_name="evalkit", retry=NO_DELAY
    )
    assert result.action == "created"
    assert fake_github.comment_bodies(PR) == [
        report("another bot"),
        report("hidden"),
        report("ours"),
    ]
    again = upsert_sticky_comment(
        repo_of(fake_github), PR, report("ours v2"), config_name="evalkit", retry=NO_DELAY
    )
    assert (again.action, again.comment_id) == ("updated", result.comment_id)


def test_github_comment_create_lost_to_5xx_is_not_posted_twice(fake_github: FakeGitHub) -> None:
    # GitHub stored the comment but the answer was a 502: listing again finds it.
    fake_github.fail("POST", r"/comments$", 502, after_handling=True)
    result = upsert_sticky_comment(
        repo_of(fake_github), PR, report("x"), config_name="evalkit", retry=NO_DELAY
    )
    assert result.action == "unchanged"
    assert fake_github.comment_bodies(PR) == [report("x")]
    assert len(fake_github.api_calls("POST")) == 1
    assert len(fake_github.api_calls("GET", "/comments")) == 2


def test_github_comment_create_5xx_without_effect_is_retried(fake_github: FakeGitHub) -> None:
    fake_github.fail("POST", r"/comments$", 502)
    result = upsert_sticky_comment(
        repo_of(fake_github), PR, report("x"), config_name="evalkit", retry=NO_DELAY
    )
    assert result.action == "created"
    assert fake_github.comment_bodies(PR) == [report("x")]
