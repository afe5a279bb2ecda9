"""evalkit.yaml users grade with OpenAI's reasoning and gpt-5-class models.

Those models refuse ``max_tokens`` (HTTP 400 "Use 'max_completion_tokens'") and any
temperature but their default.  The loopback server here refuses both with the bodies
the real service sends; ``evalkit run`` runs in process, the judge talks real HTTP.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit.cli import main
from fakes.openai_server import FakeOpenAI
from helpers.artefact_docs import load_artefact
from helpers.cli import answer_target
from helpers.judge_project import imports_undone, openai_judge_config

MODULE = "reasoning_qa_target"


GOLDENS = (
    '{"id": "a", "query": "Capital of France?", "expected": "Paris"}\n'
    '{"id": "b", "query": "Capital of Italy?", "expected": "Rome"}\n'
)
CHECKS = "checks:\n  - id: ok\n    metric: helpfulness\n    op: '>='\n    threshold: 1.0\n"


@pytest.fixture
def api() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(reasoning_model=True) as server:
        yield server


@pytest.fixture(autouse=True)
def _own_imports(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with imports_undone(MODULE):
        yield


def project(tmp_path: Path, api: FakeOpenAI, extra: str = "") -> Path:
    (tmp_path / f"{MODULE}.py").write_text(answer_target({"a": "Paris", "b": "Rome"}))
    (tmp_path / "goldens.jsonl").write_text(GOLDENS)
    (tmp_path / "checks.yaml").write_text(CHECKS)
    config = tmp_path / "evalkit.yaml"
    config.write_text(
        openai_judge_config(
            MODULE,
            api.openai_base_url,
            model="gpt-5-mini",
            metrics="helpfulness",
            goldens="goldens.jsonl",
            extra=extra,
        )
    )
    return config


def run(capsys: pytest.CaptureFixture[str], config: Path) -> tuple[int, str, str]:
    code = main(["run", "-c", str(config), "--out", str(config.parent / "run.json")])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def limit_keys(api: FakeOpenAI) -> list[list[str]]:
    return [
        sorted(k for k in (r.body or {}) if k in ("max_tokens", "max_completion_tokens"))
        for r in api.completion_requests
    ]


def test_token_limit_key_in_the_config_grades_with_a_reasoning_model(
    api: FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path, api, "  token_limit_key: max_completion_tokens\n")
    code, _, err = run(capsys, config)
    assert code == 0, err
    assert limit_keys(api) == [["max_completion_tokens"], ["max_completion_tokens"]]
    # evalkit.yaml never sends a temperature: these models take only their default.
    assert all("temperature" not in (r.body or {}) for r in api.completion_requests)
    assert "warning" not in err
    rows = load_artefact(tmp_path / "run.json")["rows"]
    assert [row["metrics"]["helpfulness"] for row in rows] == [4.0, 4.0]


def test_left_out_the_judge_moves_to_max_completion_tokens_once_and_says_so(
    api: FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, project(tmp_path, api))
    assert code == 0, err
    # one refused (unbilled) request, then every grade with the key the model takes
    assert limit_keys(api) == [["max_tokens"], ["max_completion_tokens"], ["max_completion_tokens"]]
    notes = [line for line in err.splitlines() if "max_completion_tokens" in line]
    assert len(notes) == 1, err
    assert notes[0].startswith("evalkit: warning: LLM judge 'gpt-5-mini'")
    assert "token_limit_key: max_completion_tokens" in notes[0]


def test_an_explicit_max_tokens_is_not_overridden_and_the_fix_is_named(
    api: FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, project(tmp_path, api, "  token_limit_key: max_tokens\n"))
    assert code == 3, err
    assert limit_keys(api) == [["max_tokens"], ["max_tokens"]]  # each case once, no retry
    assert "HTTP 400 unsupported_parameter" in err
    assert "set token_limit_key: max_completion_tokens" in err


def test_a_misspelt_judge_key_names_the_judge_and_its_line(
    api: FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path, api, "  token_limit_kye: max_completion_tokens\n")
    code, _, err = run(capsys, config)
    assert code == 2
    assert err.strip() == (
        f"evalkit: {config}:13: unknown key 'judge.token_limit_kye' (the judge of metric "
        "'helpfulness') (did you mean 'token_limit_key'?)"
    )
    assert api.completion_requests == []


def test_token_limit_key_on_the_anthropic_provider_is_refused(
    api: FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = project(tmp_path, api, "  token_limit_key: max_completion_tokens\n")
    text = config.read_text().replace("  provider: openai\n", "").replace("  base_url", "  #")
    config.write_text(text)
    code, _, err = run(capsys, config)
    assert code == 2
    assert "token_limit_key applies to provider 'openai' only" in err
