"""The README's code runs as written, with small stand-ins for the reader's own systems."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit._spec.config import EvalkitConfig
from evalkit.checks import checks_from_data
from servers.search import Reply, SearchServer

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
FENCE = re.compile(r"```(\w+)\n(.*?)```", re.S)


def blocks(lang: str) -> list[str]:
    return [body for kind, body in FENCE.findall(README) if kind == lang]


class Query:
    def __init__(self, qid: str, text: str) -> None:
        self.id = qid
        self.text = text


def stand_ins(search_url: str) -> dict[str, Any]:
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
        "__name__": "readme",
    }


@pytest.fixture
def search_server() -> Iterator[SearchServer]:
    with SearchServer() as server:
        server.route("/api/search", Reply(json={"results": [{"id": "pizza-margherita"}]}))
        yield server


def test_readme_has_the_quick_start_commands() -> None:
    assert "uv run evalkit gate --config examples/custom_client/evalkit.yaml" in README
    assert "uv run pytest" in README


def test_python_blocks_run(search_server: SearchServer, tmp_path: Path) -> None:
    code_blocks = blocks("python")
    assert len(code_blocks) >= 5
    namespace = stand_ins(search_server.url("/api/search"))
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        for code in code_blocks:
            code = code.replace(
                "http://localhost:3001/api/search", search_server.url("/api/search")
            )
            code = code.replace(".evalkit/judge-cache.json", str(tmp_path / "judge.json"))
            exec(compile(code, "README.md", "exec"), namespace)
    finally:
        os.chdir(cwd)
    assert namespace["response"].ranked_ids == ["pizza-margherita"]
    assert namespace["v"].n_queries == 40
    assert len(namespace["specs"]) == 6
    assert search_server.count("/api/search") == 1


def test_yaml_blocks_are_valid() -> None:
    docs = [yaml.safe_load(b) for b in blocks("yaml")]
    checks = [d for d in docs if isinstance(d, dict) and isinstance(d.get("checks"), list)]
    assert checks
    for data in checks:
        checks_from_data(data, source="README.md")
    configs = [d for d in docs if isinstance(d, dict) and "goldens" in d]
    assert configs
    for data in configs:
        EvalkitConfig.model_validate(data)


def test_example_config_referenced_by_readme_exists() -> None:
    for rel in re.findall(r"examples/[\w/.-]+\.(?:yaml|jsonl|py)", README):
        assert (REPO / rel).exists(), rel


def _config_keys(model: Any, prefix: str = "") -> Iterator[str]:
    """Every key path of the evalkit.yaml models (``target.http.url``, ``judge[].model``)."""
    from typing import get_args

    from pydantic import BaseModel

    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        yield path
        nested = [
            arg
            for arg in (field.annotation, *get_args(field.annotation))
            for arg in (arg, *get_args(arg))
            if isinstance(arg, type) and issubclass(arg, BaseModel)
        ]
        for sub in dict.fromkeys(nested):
            is_list = "list" in str(field.annotation)
            yield from _config_keys(sub, f"{path}[]." if is_list else f"{path}.")


def test_readme_documents_every_config_key() -> None:
    table = README.split("### Every `evalkit.yaml` key", 1)[1].split("\n### ", 1)[0]
    documented = set(re.findall(r"^\| `([^`]+)`(?: / `([^`]+)`)?", table, re.M))
    flat = {key for pair in documented for key in pair if key}
    keys = list(_config_keys(EvalkitConfig))
    assert len(keys) > 30
    # A block (target, baseline) is documented through its keys.
    missing = [k for k in keys if k not in flat and not any(f.startswith(k + ".") for f in flat)]
    assert missing == [], missing


def test_the_self_consistency_sentence_states_its_condition() -> None:
    # Self-consistency needs repeats > 1; a reader of the sentence alone must learn that.
    flat = " ".join(README.split())
    start = flat.index("graded twice")
    sentence = flat[flat.rfind(". ", 0, start) : start]
    assert "`repeats` above 1" in sentence
