"""No control character from a target, a judge or a file reaches the terminal (issue #48).

A hostile body carries an OSC 52 clipboard write, an OSC 8 link, a window title, BEL,
NUL, DEL and a C1 CSI.  Whatever path quotes it (a body excerpt, a failed case's
error, a case id in a message), stderr shows each spelled out (``\\x1b``) and holds
none of them raw.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.cli import evalkit
from helpers.tiny_project import CHECKS, CONFIG, GOLDENS, TARGET_MODULE
from servers.search import Reply, SearchServer

OSC52 = "\x1b]52;c;ZXZpbA==\x07"
OSC8 = "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\"
TITLE = "\x1b]0;pwned\x07"
HOSTILE = f"{OSC52}{OSC8}{TITLE}bell\x07nul\x00del\x7fcsi\x9b31m"
RAW = ("\x1b", "\x07", "\x00", "\x7f", "\x9b")


def project(root: Path, url: str) -> Path:
    (root / "tiny_target.py").write_text(TARGET_MODULE)
    (root / "goldens.jsonl").write_text(GOLDENS)
    (root / "checks.yaml").write_text(CHECKS)
    target = f'  http: {{url: "{url}", extract: "results[].id", timeout_s: 5}}'
    (root / "evalkit.yaml").write_text(
        CONFIG.replace('  python: "tiny_target:make_target"', target)
    )
    return root


def assert_spelled(stderr: str) -> None:
    raw = [repr(ch) for ch in RAW if ch in stderr]
    assert raw == [], (raw, stderr)
    assert "ZXZpbA==" in stderr, stderr  # the payload is quoted, as text


@pytest.mark.parametrize(
    "reply",
    [
        Reply(body=HOSTILE, content_type="text/plain"),  # not JSON: the excerpt is quoted
        Reply(status=500, body=HOSTILE),  # a server error's body
        Reply(json={"results": HOSTILE}),  # JSON, but extract finds no list of ids
    ],
    ids=["not-json", "status-500", "extract-fails"],
)
def test_a_hostile_body_reaches_stderr_spelled_out(tmp_path: Path, reply: Reply) -> None:
    with SearchServer() as server:
        server.route("/s", reply)
        root = project(tmp_path, server.url("/s"))
        result = evalkit("run", "--out", "c.json", "--allow-failed", cwd=root)
    assert result.returncode != 0 or "failed" in result.stderr, result
    assert_spelled(result.stderr)


def test_a_hostile_case_id_in_an_error_is_spelled_out(tmp_path: Path) -> None:
    with SearchServer() as server:
        server.route("/s", Reply(json={"results": ["d1"]}))
        root = project(tmp_path, server.url("/s"))
        hostile_id = json.dumps({"id": f"x{OSC52}", "query": "q", "relevant": ["d1"]})
        goldens = GOLDENS + hostile_id + "\n" + hostile_id + "\n"  # a duplicate id: refused
        (root / "goldens.jsonl").write_text(goldens)
        result = evalkit("run", "--out", "c.json", cwd=root)
    assert result.returncode == 2, result
    assert_spelled(result.stderr)
