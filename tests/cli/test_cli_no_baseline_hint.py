"""The no-baseline hint works for the store evalkit.yaml configures, and is only given when a
check compares with a baseline.  ``evalkit gate`` in process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit.cli import main
from helpers.judge_project import imports_undone
from helpers.tiny_project import CHECKS, CONFIG, GOLDENS, TARGET_MODULE

MODULE = "hint_target"
THRESHOLD_ONLY = "checks:\n  - {id: floor, metric: recall@1, op: '>=', threshold: 0.5}\n"


@pytest.fixture(autouse=True)
def _own_imports() -> Iterator[None]:
    with imports_undone(MODULE):
        yield


def gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], *, checks: str = CHECKS, baseline: str = ""
) -> tuple[int, str]:
    (tmp_path / f"{MODULE}.py").write_text(TARGET_MODULE)
    (tmp_path / "goldens.jsonl").write_text(GOLDENS)
    (tmp_path / "checks.yaml").write_text(checks)
    config = CONFIG.replace("tiny_target", MODULE) + baseline
    (tmp_path / "evalkit.yaml").write_text(config)
    code = main(["gate", "-c", str(tmp_path / "evalkit.yaml")])
    captured = capsys.readouterr()
    return code, " ".join((captured.out + captured.err).split())


@pytest.mark.parametrize("section", ["", "baseline: {store: branch}\n"])
def test_a_github_store_is_told_what_works_for_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], section: str
) -> None:
    code, text = gate(tmp_path, capsys, baseline=section)
    assert code == 0, text
    assert "No baseline" in text
    assert "evalkit promote" not in text  # refused for these stores
    assert "mode: promote" in text
    assert "--baseline PATH" in text


def test_no_store_says_how_to_keep_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, text = gate(tmp_path, capsys, baseline="baseline: {store: none}\n")
    assert code == 0, text
    assert "--baseline PATH" in text
    assert "baseline: {path: baseline.json} and `evalkit promote RUN`" in text


def test_a_missing_baseline_file_names_evalkit_promote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = gate(tmp_path, capsys, baseline="baseline: {path: base.json}\n")
    assert code == 2
    assert "does not exist; make it with `evalkit promote RUN`" in text


def test_without_a_vs_baseline_check_a_pass_says_nothing_of_a_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = gate(tmp_path, capsys, checks=THRESHOLD_ONLY)
    assert code == 0, text
    assert "PASS" in text
    assert "baseline" not in text.lower()
