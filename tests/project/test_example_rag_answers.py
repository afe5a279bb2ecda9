"""examples/rag_answers replays its judge from the committed cache: the candidate passes,
the regressed variant exits 1, and no grading request leaves the machine."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes import unused_port
from helpers.cli import evalkit

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rag_answers"
# Any request to the judge would go here and be refused: the cache must cover everything.
OFFLINE = {"ANTHROPIC_BASE_URL": f"http://127.0.0.1:{unused_port()}", "ANTHROPIC_API_KEY": "x"}


@pytest.mark.parametrize(("config", "code"), [("evalkit.yaml", 0), ("evalkit-regressed.yaml", 1)])
def test_the_example_gates_offline_from_the_committed_cache(
    config: str, code: int, tmp_path: Path
) -> None:
    out = tmp_path / "run.json"
    result = evalkit(
        "gate",
        "--config",
        config,
        "--judge-cache-only",
        "--out",
        str(out),
        cwd=EXAMPLE,
        env=OFFLINE,
    )
    assert result.returncode == code, result.stdout + result.stderr
    assert "judge-human agreement on 12 case(s)" in result.stdout
    if code == 1:
        assert "answers_cite_sources" in result.stdout
        assert "facts_not_worse" in result.stdout
