"""The reference pages' code runs as written, their YAML is valid, their links lead somewhere."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit._spec.config import EvalkitConfig
from evalkit.checks import checks_from_data
from helpers.markdown import DOCS, REPO, anchors, blocks, links, pages, read
from servers.search import Reply, SearchServer

# The pages whose Python blocks are one program each, run with the reader's stand-ins.
EXECUTED = ("library.md", "judges.md", "checks.md")


class Query:
    def __init__(self, qid: str, text: str) -> None:
        self.id = qid
        self.text = text


def stand_ins() -> dict[str, Any]:
    """What the reader brings: two search systems, queries, qrels, a ranker."""
    queries = [Query(f"q{i}", f"query {i}") for i in range(40)]
    qrels = {q.id: {f"d{int(q.id[1:]) % 7}"} for q in queries}

    def search_v1(q: Query) -> list[str]:
        i = int(q.id[1:])
        return [f"d{(i + 1) % 7}", f"d{i % 7}"] if i % 3 else [f"d{i % 7}"]

    def search_v2(q: Query) -> list[str]:
        return [f"d{int(q.id[1:]) % 7}", "d99"]

    return {
        "search_v1": search_v1,
        "search_v2": search_v2,
        "queries": queries,
        "qrels": qrels,
        "my_ranker": lambda case: ["carbonara", "pizza-margherita"],
        "count_unsupported": lambda text: 0,
        "__name__": "docs",
    }


@pytest.fixture
def search_server() -> Iterator[SearchServer]:
    with SearchServer() as server:
        server.route("/api/search", Reply(json={"results": [{"id": "pizza-margherita"}]}))
        yield server


def test_python_blocks_run(search_server: SearchServer, tmp_path: Path) -> None:
    namespace = stand_ins()
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        for page in EXECUTED:
            code_blocks = blocks(read(DOCS / page), "python")
            assert code_blocks, page
            for code in code_blocks:
                code = code.replace(
                    "http://localhost:3001/api/search", search_server.url("/api/search")
                )
                code = code.replace(".evalkit/judge-cache.json", str(tmp_path / "judge.json"))
                exec(compile(code, f"docs/{page}", "exec"), namespace)
    finally:
        os.chdir(cwd)
    assert namespace["response"].ranked_ids == ["pizza-margherita"]
    assert namespace["v"].n_queries == 40
    assert len(namespace["specs"]) == 6
    assert search_server.count("/api/search") == 1


def test_yaml_blocks_are_valid() -> None:
    checks, configs = 0, 0
    for page in pages():
        for body in blocks(read(page), "yaml"):
            data = yaml.safe_load(body)
            if isinstance(data, dict) and isinstance(data.get("checks"), list):
                checks_from_data(data, source=str(page))
                checks += 1
            if isinstance(data, dict) and "goldens" in data:
                EvalkitConfig.model_validate(data)
                configs += 1
    assert checks >= 3
    assert configs >= 3


def test_the_self_consistency_sentence_states_its_condition() -> None:
    # Self-consistency needs repeats > 1; a reader of the sentence alone must learn that.
    flat = " ".join(read(DOCS / "library.md").split())
    start = flat.index("graded twice")
    sentence = flat[flat.rfind(". ", 0, start) : start]
    assert "`repeats` above 1" in sentence


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in links(read(page)):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists() or (
            anchor and dest.suffix == ".md" and anchor not in anchors(read(dest))
        ):
            broken.append(target)
    return broken


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_link_leads_to_a_file_and_heading_that_exist(page: Path) -> None:
    assert broken_links(page) == []


def test_a_broken_link_is_found(tmp_path: Path) -> None:
    (tmp_path / "b.md").write_text("# Only heading\n", encoding="utf-8")
    page = tmp_path / "a.md"
    page.write_text(
        "[ok](b.md#only-heading) [gone](c.md#x) [no anchor](b.md#other) "
        "[self](#here)\n\n## Here\n\n```\n[in code](nowhere.md)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(page) == ["c.md#x", "b.md#other"]


def test_the_contents_page_lists_every_page() -> None:
    listed = {target.partition("#")[0] for target in links(read(DOCS / "README.md"))}
    pages_here = {p.name for p in DOCS.glob("*.md")} - {"README.md"}
    assert pages_here - listed == set()
    assert "design/README.md" in listed
