"""The rest of the readers, through the CLI: TREC files, HTTP target replies, judge replies,
a judge's rubric file.

Each hostile input is refused by a bound while it is read (so the tests are small and
fast by construction: limits are lowered through ``EVALKIT_MAX_INPUT_MB``), with the
right exit code (2 for a file the user gave, 3 for a reply from outside) and one
stderr line naming the culprit.
"""

from __future__ import annotations

import gzip
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.anthropic_server import FakeAnthropic, malformed
from helpers.cli import evalkit
from helpers.tiny_project import CHECKS, GOLDENS, one_line_error
from servers.search import Reply, SearchServer

DEEP = 100_000
SMALL_LIMIT = {"EVALKIT_MAX_INPUT_MB": "1"}


# ------------------------------------------------------------------------------- TREC


def trec_args(run: str, qrels: str) -> list[str]:
    return [
        *("run", "--trec-run", run, "--qrels", qrels),
        *("--metrics", "ndcg@10", "--out", "s.json"),
    ]


@pytest.mark.parametrize("which", ["run", "qrels"])
def test_a_trec_gzip_bomb_without_newlines_is_refused_at_its_line(
    tmp_path: Path, which: str
) -> None:
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 1.0 t\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    # 8 MB of one unterminated line after a good one, ~8 KB on disk; lines may be 1 MB.
    bomb = gzip.compress(b"q1 0 d1 1\n" + b"x" * (8 * 1024 * 1024))
    (tmp_path / f"{which}.gz").write_bytes(bomb)
    run = "run.gz" if which == "run" else "run.txt"
    qrels = "qrels.gz" if which == "qrels" else "qrels.txt"
    result = evalkit(*trec_args(run, qrels), cwd=tmp_path, env=SMALL_LIMIT)
    one_line_error(result, 2, f"{which}.gz:2:", "line is longer than")
    assert not (tmp_path / "s.json").exists()


# ------------------------------------------------------------------------ HTTP target


@pytest.fixture
def search() -> Iterator[SearchServer]:
    with SearchServer() as server:
        yield server


def http_project(root: Path, server: SearchServer) -> Path:
    (root / "goldens.jsonl").write_text(GOLDENS)
    (root / "checks.yaml").write_text(CHECKS)
    config = {
        "goldens": "goldens.jsonl",
        "checks": "checks.yaml",
        "metrics": ["recall@1", "ndcg@10"],
        "target": {
            "name": "search",
            "http": {
                "url": server.url("/search"),
                "payload": {"q": "{{query}}"},
                "extract": "results[].id",
                "timeout_s": 5,
            },
        },
    }
    (root / "evalkit.yaml").write_text(json.dumps(config))
    return root


@pytest.mark.parametrize(
    ("reply", "needle"),
    [
        (Reply(body=b" " * (2 * 1024 * 1024) + b"{}"), "over the 1048576 byte limit"),
        (Reply(body=b"[" * DEEP + b"]" * DEEP), "nested deeper than 100 levels"),
    ],
    ids=["huge-body", "deep-body"],
)
def test_a_hostile_http_reply_fails_the_case_with_one_line(
    tmp_path: Path, search: SearchServer, reply: Reply, needle: str
) -> None:
    search.route("/search", reply)
    project = http_project(tmp_path, search)
    result = evalkit("run", "--out", "x.json", cwd=project, env=SMALL_LIMIT)
    one_line_error(result, 3, "all 3 case(s) failed", "search", needle)


# ------------------------------------------------------------------------- judge replies

JUDGE_TARGET = """
from evalkit import CallableTarget

def make_target():
    return CallableTarget(lambda case: "an answer", name="qa-bot")
"""

JUDGE_CONFIG = """\
goldens: goldens.jsonl
checks: checks.yaml
metrics: [helpfulness]
target:
  python: "qa_target:make_target"
judge:
  metric: helpfulness
  model: claude-test-judge
  rubric_file: rubric.txt
  cache_path: cache/judge.json
"""


def judge_project(root: Path) -> Path:
    (root / "qa_target.py").write_text(JUDGE_TARGET)
    (root / "goldens.jsonl").write_text(GOLDENS)
    (root / "checks.yaml").write_text(
        "checks:\n  - id: ok\n    metric: helpfulness\n    op: '>='\n    threshold: 1\n"
    )
    (root / "rubric.txt").write_text("5 if right, 1 if wrong\n")
    (root / "evalkit.yaml").write_text(JUDGE_CONFIG)
    return root


def run_with_api(root: Path, api: FakeAnthropic) -> subprocess.CompletedProcess[str]:
    env = {"ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": "k"}
    return evalkit("run", "--out", "x.json", cwd=root, env=env)


def test_a_judge_reply_nested_too_deep_fails_the_case_not_the_process(tmp_path: Path) -> None:
    with FakeAnthropic(default=malformed(b"[" * DEEP + b"]" * DEEP)) as api:
        result = run_with_api(judge_project(tmp_path), api)
    one_line_error(result, 3, "all 3 case(s) failed", "claude-test-judge", "nested too deep")


def test_a_rubric_file_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    project = judge_project(tmp_path)
    (project / "rubric.txt").write_bytes(b"caf\xe9\n")
    with FakeAnthropic() as api:
        result = run_with_api(project, api)
        assert api.requests == []
    one_line_error(result, 2, "rubric.txt", "not valid UTF-8 (byte 0xe9 at offset 3")
