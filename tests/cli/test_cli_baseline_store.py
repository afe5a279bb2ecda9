"""`evalkit gate` and the baseline store evalkit.yaml names, through the CLI (subprocess).

One store per config, the same one the Action opens: a configured baseline *file* that is
not there is bad input (exit 2, naming the key and the path); a store that has never been
promoted (artifact, branch; the CLI cannot read them) is no-baseline, and the report says
which store and where it looked. A baseline of another config is refused.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from helpers.cli import evalkit
from helpers.tiny_project import CHECKS, CONFIG, GOLDENS, TARGET_MODULE, one_line_error


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "tiny_target.py").write_text(TARGET_MODULE)
    (tmp_path / "goldens.jsonl").write_text(GOLDENS)
    (tmp_path / "checks.yaml").write_text(CHECKS)
    (tmp_path / "evalkit.yaml").write_text(CONFIG)
    return tmp_path


def with_baseline(project: Path, section: str) -> None:
    (project / "evalkit.yaml").write_text(CONFIG + section)


def test_cli_typo_in_baseline_path_is_exit_2_naming_key_and_path(project: Path) -> None:
    with_baseline(project, "baseline: {path: baselne.json}\n")
    result = evalkit("gate", cwd=project)
    one_line_error(result, 2, "baseline.path", str(project / "baselne.json"), "does not exist")
    assert "PASS" not in result.stdout
    # Decided before the target runs: no candidate artefact was written.
    assert not (project / ".evalkit" / "runs").exists()


def test_cli_baseline_path_that_is_a_folder_is_exit_2(project: Path) -> None:
    (project / "base").mkdir()
    with_baseline(project, "baseline: {store: file, path: base}\n")
    one_line_error(evalkit("gate", cwd=project), 2, "baseline.path", "is a folder")


@pytest.mark.parametrize(
    ("section", "words"),
    [
        ("baseline: {store: artifact, name: nightly}\n", ["store is artifact", "'nightly'"]),
        ("", ["store is artifact", "'evalkit-baseline'"]),  # the default, decided in one place
        (
            "baseline: {store: branch, branch: bl}\n",
            ["store is branch", "branch bl", "latest/evalkit.json"],
        ),
        ("baseline: {store: none}\n", ["baseline.store is none"]),
    ],
)
def test_cli_never_promoted_store_is_no_baseline_naming_store_and_place(
    project: Path, section: str, words: list[str]
) -> None:
    with_baseline(project, section)
    result = evalkit("gate", "--markdown", "r.md", cwd=project)
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "no baseline" in text.lower()
    markdown = " ".join(html.unescape((project / "r.md").read_text()).split())
    for word in words:
        assert word in text, (word, text)
        assert word in markdown, (word, markdown)


def test_cli_file_store_baseline_is_used(project: Path) -> None:
    assert evalkit("run", "--out", "base.json", cwd=project).returncode == 0
    with_baseline(project, "baseline: {path: base.json}\n")
    result = evalkit("gate", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "no baseline" not in result.stdout.lower()


@pytest.mark.parametrize("how", ["--baseline", "file store"])
def test_cli_baseline_of_another_config_is_refused(project: Path, how: str) -> None:
    assert evalkit("run", "--out", "base.json", cwd=project).returncode == 0
    data = json.loads((project / "base.json").read_text())
    data["config_name"] = "other-config"
    (project / "base.json").write_text(json.dumps(data))
    if how == "--baseline":
        result = evalkit("gate", "--baseline", "base.json", cwd=project)
    else:
        with_baseline(project, "baseline: {path: base.json}\n")
        result = evalkit("gate", cwd=project)
    one_line_error(result, 2, "'other-config'", "not 'evalkit'")
