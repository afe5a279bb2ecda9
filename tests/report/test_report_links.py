"""The comment's links work in the user's repository: absolute, to docs that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evalkit._version import __version__
from evalkit.report.links import DEFAULT_BRANCH, RELEASED, REPOSITORY, docs_ref, docs_url
from evalkit.report.markdown import render_markdown

from .samples import SCENARIOS

ROOT = Path(__file__).parents[2]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_released_is_what_the_changelog_says() -> None:
    """Flip RELEASED when the CHANGELOG dates this version: its tag exists from then on."""
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    heading = next(
        line for line in changelog.splitlines() if line.startswith(f"## [{__version__}]")
    )
    dated = re.search(r"\] - \d{4}-\d{2}-\d{2}", heading) is not None
    assert dated == RELEASED, heading
    assert docs_ref() == (f"v{__version__}" if dated else DEFAULT_BRANCH)


def test_docs_url_names_a_page_that_exists() -> None:
    url = docs_url("drift.md")
    assert url == f"{REPOSITORY}/blob/{docs_ref()}/docs/drift.md"
    assert (ROOT / "docs" / "drift.md").is_file()


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_link_in_a_comment_is_absolute_and_lands(name: str) -> None:
    out = render_markdown(SCENARIOS[name](), config_name="c", details_url="https://ci.example/1")
    assert "docs/drift.md" not in out.replace(docs_url("drift.md"), "")  # no relative path
    for url in LINK.findall(out):
        assert url.startswith("https://"), url
        if url.startswith(REPOSITORY):
            page = url.removeprefix(f"{REPOSITORY}/blob/{docs_ref()}/").split("#")[0]
            assert (ROOT / page).is_file(), url
