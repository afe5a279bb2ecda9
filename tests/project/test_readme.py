"""The README is a short guide whose commands and code run as written."""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys

import yaml

from evalkit._spec.config import EvalkitConfig
from evalkit.checks import checks_from_data
from helpers.markdown import REPO, blocks, read

README = read(REPO / "README.md")
MAX_LINES = 250


def test_the_readme_is_a_page() -> None:
    assert len(README.splitlines()) <= MAX_LINES


def test_readme_has_the_quick_start_and_test_commands() -> None:
    (quick_start,) = [b for b in blocks(README, "bash") if b.startswith("git clone")]
    flat = " ".join(quick_start.replace("\\\n", " ").split())
    for config in ("evalkit.yaml", "evalkit-regressed.yaml"):
        assert (
            f"uv run evalkit gate --config examples/custom_client/{config} "
            "--baseline examples/custom_client/baseline.json"
        ) in flat
    assert "pip install paired-evalkit" in README
    assert "uv add paired-evalkit" in README
    assert "uv run pytest" in README


def test_the_library_example_prints_what_the_readme_shows() -> None:
    (code,) = blocks(README, "python")
    shown = README.split("<!-- output -->", 1)[1]
    (expected,) = blocks(shown, "text")[:1]
    out = io.StringIO()
    cwd, path = os.getcwd(), list(sys.path)
    os.chdir(REPO)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    finally:
        os.chdir(cwd)
        sys.path[:] = path
        sys.modules.pop("search_service", None)
    assert out.getvalue() == expected


def test_yaml_blocks_are_a_valid_config_and_checks_file() -> None:
    docs = [yaml.safe_load(b) for b in blocks(README, "yaml")]
    (config,) = [d for d in docs if isinstance(d, dict) and "goldens" in d]
    EvalkitConfig.model_validate(config)
    (checks,) = [d for d in docs if isinstance(d, dict) and isinstance(d.get("checks"), list)]
    checks_from_data(checks, source="README.md")
    named = {check["metric"] for check in checks["checks"]}
    assert named <= set(config["metrics"])


def test_the_example_files_the_readme_names_exist() -> None:
    named = re.findall(r"examples/[\w/.-]+\.(?:yaml|jsonl|py|json)", README)
    assert named
    for rel in named:
        assert (REPO / rel).exists(), rel


def test_the_readme_quotes_no_family_wise_figure() -> None:
    # The report words and measures that sentence; the README only points at it.
    assert not re.search(r"\d+(\.\d+)? ?%.{0,80}fail(s|ed)? falsely", README, re.S)
