"""``logging.getLogger("evalkit")`` for library users (docs/logging.md).

The package logger carries a NullHandler from ``import evalkit``; retries are logged at
INFO, cache hits and skipped cases at DEBUG/INFO; the CLI prints exactly what it printed
before (it attaches no handler, and these levels never reach Python's last-resort handler).
"""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit import CallableTarget, GoldenCase, evaluate
from evalkit._util.retry_after import WaitBudget
from evalkit.targets import HttpTarget, TargetResponse
from fakes import FakeAnthropic
from helpers.cli import evalkit, evalkit_process, write_files
from helpers.tiny_project import CHECKS, CONFIG, GOLDENS, TARGET_MODULE
from servers.search import Reply, SearchServer

CASES = [GoldenCase(id=f"q{i}", query=f"query {i}", relevant=frozenset({"d1"})) for i in range(4)]


@pytest.fixture
def server() -> Iterator[SearchServer]:
    with SearchServer() as running:
        yield running


def messages(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("evalkit") and r.levelno == level
    ]


def test_import_evalkit_gives_the_package_logger_a_null_handler() -> None:
    code = (
        "import logging, evalkit; "
        "print([type(h).__name__ for h in logging.getLogger('evalkit').handlers])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "['NullHandler']"


@pytest.mark.parametrize("concurrency", [1, 4])  # one case at a time, and the event loop
def test_a_retried_http_attempt_is_logged_at_info(
    server: SearchServer, caplog: pytest.LogCaptureFixture, concurrency: int
) -> None:
    url = server.route(
        "/search",
        Reply(status=503, body="busy"),
        Reply(json={"results": [{"id": "d1"}]}),
        per_case=True,
    )
    target = HttpTarget(
        url=url,
        name="prod",
        timeout_s=5.0,
        build_payload=lambda c: {"q": c.query, "id": c.id},
        extract=lambda body: [r["id"] for r in body["results"]],
    )
    with caplog.at_level(logging.INFO, logger="evalkit"), target:
        run = evaluate(target, CASES, ["recall@1"], concurrency=concurrency)
    assert all(row.error is None for row in run.per_query)
    retries = [m for m in messages(caplog, logging.INFO) if "retrying" in m]
    assert len(retries) == len(CASES) == server.count("/search") // 2
    assert all("attempt 1 of 2 failed (HTTP 503 Service Unavailable: busy)" in m for m in retries)


def test_a_rate_limit_wait_is_logged_at_info(caplog: pytest.LogCaptureFixture) -> None:
    waited: list[float] = []
    budget = WaitBudget(10.0, sleep=waited.append, who="LLM judge 'm'")
    with caplog.at_level(logging.INFO, logger="evalkit"):
        assert budget.wait(2.5)
        assert not budget.wait(20.0)  # not waited: nothing to log
    assert waited == [2.5]
    (line,) = messages(caplog, logging.INFO)
    assert line.startswith("LLM judge 'm' asked to wait 2.5 s (rate limited)")
    assert "7.5 s of the 10.0 s wait budget left" in line


def test_resumed_cases_are_logged_as_skipped(caplog: pytest.LogCaptureFixture) -> None:
    target = CallableTarget(lambda case: ["d1"], name="t")
    with caplog.at_level(logging.DEBUG, logger="evalkit"):
        run = evaluate(target, CASES, ["recall@1"], skip=["q1", "q3"])
    assert {row.query_id for row in run.per_query} == {"q0", "q2"}
    assert "2 of 4 case(s) already done (resumed): not run again" in messages(caplog, logging.INFO)
    assert "cases not run again: q1, q3" in messages(caplog, logging.DEBUG)


def test_a_judge_cache_hit_is_logged_at_debug(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from evalkit.metrics import LLMJudge

    answer = TargetResponse(text="Canberra.")
    with FakeAnthropic() as api:
        client = api.client()
        judge = LLMJudge(
            "Is it right?", "claude-test", cache_path=tmp_path / "cache.json", client=client
        )
        with caplog.at_level(logging.DEBUG, logger="evalkit"):
            judge.grade(answer, CASES[0])  # graded by the API: no hit
            assert messages(caplog, logging.DEBUG) == []
            judge.grade(answer, CASES[0])
        client.close()
        assert len(api.message_requests) == 1
    assert messages(caplog, logging.DEBUG) == [
        "LLM judge 'claude-test': case 'q0' graded from the cache"
    ]


def test_the_cli_prints_what_it_printed_without_logging(tmp_path: Path) -> None:
    files = {"tiny_target.py": TARGET_MODULE, "goldens.jsonl": GOLDENS, "checks.yaml": CHECKS}
    project = write_files(tmp_path, {**files, "evalkit.yaml": CONFIG})
    # -k skips cases, which is logged at INFO: a process prints none of it
    done = evalkit_process("run", "-k", "a", "--out", "a.json", cwd=project)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "wrote a.json (1 cases of 3, subset: -k a)\n"
    assert done.stderr == ""
    assert evalkit("run", "-k", "a", "--out", "b.json", cwd=project).stderr == ""
