"""Hostile files through the CLI: alias bombs, deep nesting, huge and gzip-bomb files.

Each one must end in exit 2 with exactly one stderr line naming ``file:line`` (or the
file), no traceback, and nothing written.  Every bomb here is refused by a bound in
``evalkit._util.bounded``/``evalkit._util.yaml_files`` while it is being read, so the tests are fast
and small by construction: the alias bomb is refused after composing a few hundred
nodes, the nesting after 100 levels, and the size limits are lowered through
``EVALKIT_MAX_INPUT_MB`` so a bomb is refused after inflating one megabyte.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from evalkit._engine.checkpoint import checkpoint_path
from helpers.artefact_docs import dump_artefact, load_artefact
from helpers.cli import evalkit
from helpers.tiny_project import CHECKS, CONFIG, GOLDENS, TARGET_MODULE, one_line_error

# Nine aliases per level, nine levels: 9**9 (387 million) strings once expanded.
BILLION_LAUGHS = (
    'lol: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
    + "".join(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 10))
)
DEEP = 100_000


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "tiny_target.py").write_text(TARGET_MODULE)
    (tmp_path / "goldens.jsonl").write_text(GOLDENS)
    (tmp_path / "checks.yaml").write_text(CHECKS)
    (tmp_path / "evalkit.yaml").write_text(CONFIG)
    return tmp_path


def run_ok(project: Path) -> Path:
    """A good artefact to build hostile variants from."""
    result = evalkit("run", "--out", "good.json", cwd=project)
    assert result.returncode == 0, result.stderr
    return project / "good.json"


# ----------------------------------------------------------------------- YAML alias bombs


def line_of(text: str, prefix: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if line.startswith(prefix))


# The expansion passes 200 000 nodes at the second alias on the "l5:" line.
def test_alias_bomb_in_the_config_is_refused_at_its_line(project: Path) -> None:
    config = (project / "evalkit.yaml").read_text() + BILLION_LAUGHS
    (project / "evalkit.yaml").write_text(config)
    result = evalkit("run", "--out", "x.json", cwd=project)
    one_line_error(result, 2, f"evalkit.yaml:{line_of(config, 'l5:')}:", "alias bomb")
    assert not (project / "x.json").exists()


def test_alias_bomb_in_the_checks_file_is_refused(project: Path) -> None:
    (project / "checks.yaml").write_text(BILLION_LAUGHS + "checks: *l9\n")
    line = line_of(BILLION_LAUGHS, "l5:")
    one_line_error(evalkit("run", cwd=project), 2, f"checks.yaml:{line}:", "alias bomb")


def test_alias_bomb_in_yaml_goldens_is_refused(project: Path) -> None:
    (project / "goldens.yaml").write_text(BILLION_LAUGHS + "cases: *l9\n")
    config = (project / "evalkit.yaml").read_text().replace("goldens.jsonl", "goldens.yaml")
    (project / "evalkit.yaml").write_text(config)
    line = line_of(BILLION_LAUGHS, "l5:")
    one_line_error(evalkit("run", cwd=project), 2, f"goldens.yaml:{line}:", "alias bomb")


def test_merge_key_aliases_the_yaml_way_still_work(project: Path) -> None:
    (project / "checks.yaml").write_text(
        "checks:\n"
        "  - &floor {id: floor_a, metric: recall@1, op: '>=', threshold: 0.5}\n"
        "  - {<<: *floor, id: floor_b}\n"
    )
    result = evalkit("run", cwd=project)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("text", "needle", "line"),
    [
        ("x: &a [1, *a]\n", "recursive alias *a", 1),
        ("x:\n  y: &m\n    z: *m\n", "recursive alias *m", 3),
    ],
)
def test_recursive_aliases_are_refused(project: Path, text: str, needle: str, line: int) -> None:
    (project / "evalkit.yaml").write_text(text + (project / "evalkit.yaml").read_text())
    one_line_error(evalkit("run", cwd=project), 2, f"evalkit.yaml:{line}:", needle)


# --------------------------------------------------------------------------- deep nesting


def test_deeply_nested_yaml_config_is_refused(project: Path) -> None:
    (project / "evalkit.yaml").write_text("x: " + "[" * DEEP + "]" * DEEP + "\n")
    one_line_error(evalkit("run", cwd=project), 2, "evalkit.yaml:1:", "nested deeper than 100")


def test_deeply_nested_block_yaml_checks_are_refused_at_the_line(project: Path) -> None:
    nested = "".join("  " * i + "- \n" for i in range(150))
    (project / "checks.yaml").write_text("checks:\n" + nested)
    one_line_error(evalkit("run", cwd=project), 2, "checks.yaml:101:", "nested deeper than 100")


def test_deeply_nested_jsonl_golden_is_refused_at_its_line(project: Path) -> None:
    goldens = (project / "goldens.jsonl").read_text()
    deep = '{"id": "d", "query": "q", "meta": ' + "[" * DEEP + "]" * DEEP + "}\n"
    (project / "goldens.jsonl").write_text(goldens + deep)
    one_line_error(evalkit("run", cwd=project), 2, "goldens.jsonl:4:", "nested deeper than 100")


def test_deeply_nested_artefact_is_refused(project: Path) -> None:
    (project / "deep.json").write_text("[" * DEEP + "]" * DEEP)
    for command in (["show", "deep.json"], ["gate", "--candidate", "deep.json"]):
        one_line_error(
            evalkit(*command, cwd=project), 2, "deep.json", "line 1 column 101", "nested deeper"
        )


def test_artefact_nested_under_the_parser_limit_is_still_refused(project: Path) -> None:
    # 500 levels parse fine in C but would break any recursive walk after it.
    good = run_ok(project)
    doc = load_artefact(good)
    doc["rows"][0]["meta"] = {"x": json.loads("[" * 500 + "]" * 500)}
    dump_artefact(doc, project / "deepish.json")
    one_line_error(evalkit("show", "deepish.json", cwd=project), 2, "deepish.json", "nested deeper")


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("[" * DEEP + "]" * DEEP, "nested deeper than 100"),
        ('{"id": "\\ud800"}', "surrogate pair"),
    ],
    ids=["deep", "lone-surrogate"],
)
def test_a_hostile_checkpoint_line_is_refused_not_dropped(
    project: Path, line: str, needle: str
) -> None:
    # Case "z" is unknown to the target, so it fails and the checkpoint is kept.
    goldens = project / "goldens.jsonl"
    goldens.write_text(goldens.read_text() + '{"id": "z", "query": "zeta", "relevant": ["d1"]}\n')
    first = evalkit("run", "--out", "runs/r.json", cwd=project)
    assert first.returncode == 3, first.stderr
    ckpt = checkpoint_path(project / "runs" / "r.json", project)
    # A last line that is whole but hostile is not a torn write to drop silently.
    with ckpt.open("a") as fh:
        fh.write(line + "\n")
    before = ckpt.read_bytes()
    result = evalkit("run", "--out", "runs/r.json", "--resume", cwd=project)
    lines = before.decode().count("\n")
    one_line_error(result, 2, f"{ckpt.name}:{lines}:", needle)
    assert ckpt.read_bytes() == before


# ------------------------------------------------------------------------------- size


def test_a_gzip_bomb_artefact_is_refused_after_the_limit(project: Path) -> None:
    # 4 MB of spaces (valid JSON whitespace) compresses to ~4 KB; the limit is 1 MB.
    (project / "bomb.json.gz").write_bytes(gzip.compress(b" " * (4 * 1024 * 1024) + b"{}"))
    result = evalkit("show", "bomb.json.gz", cwd=project, env={"EVALKIT_MAX_INPUT_MB": "1"})
    one_line_error(result, 2, "bomb.json.gz", "decompressed content", "EVALKIT_MAX_INPUT_MB")


@pytest.mark.parametrize("name", ["goldens.jsonl", "checks.yaml", "evalkit.yaml"])
def test_a_file_over_the_size_limit_is_refused_before_it_is_read(project: Path, name: str) -> None:
    path = project / name
    path.write_text(path.read_text() + "#" + "x" * 300_000 + "\n")
    result = evalkit("run", "--out", "x.json", cwd=project, env={"EVALKIT_MAX_INPUT_MB": "0.25"})
    one_line_error(result, 2, name, "input limit", "EVALKIT_MAX_INPUT_MB")
    assert not (project / "x.json").exists()


def test_a_bad_size_limit_setting_is_a_usage_error(project: Path) -> None:
    result = evalkit("run", cwd=project, env={"EVALKIT_MAX_INPUT_MB": "lots"})
    one_line_error(result, 2, "EVALKIT_MAX_INPUT_MB='lots'")


# ---------------------------------------------------------------- values YAML cannot build


@pytest.mark.parametrize(
    ("value", "needle"),
    [("1" * 5000, "Exceeds the limit"), ("2001-13-45", "month must be in 1..12")],
)
def test_yaml_values_python_cannot_build_name_their_line(
    project: Path, value: str, needle: str
) -> None:
    (project / "evalkit.yaml").write_text((project / "evalkit.yaml").read_text() + f"x: {value}\n")
    one_line_error(evalkit("run", cwd=project), 2, "evalkit.yaml:7:", needle)


# ------------------------------------------------------------- text that is not text


def test_a_lone_surrogate_escape_in_an_artefact_is_refused_at_read(project: Path) -> None:
    good = run_ok(project)
    (project / "odd.json").write_bytes(good.read_bytes().replace(b'"plain"', b'"\\ud800"', 1))
    for command in (["show", "odd.json"], ["compare", "odd.json", "good.json"]):
        one_line_error(evalkit(*command, cwd=project), 2, "odd.json", "surrogate pair")


def test_an_escaped_backslash_before_u_is_still_text(project: Path) -> None:
    good = run_ok(project)
    (project / "fine.json").write_bytes(good.read_bytes().replace(b'"plain"', b'"a\\\\ud800"', 1))
    result = evalkit("show", "fine.json", cwd=project)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("value", "needle"),
    [('"\\ud800"', "surrogate pair"), ('"\\U7FFFFFFF"', "not in range")],
)
def test_yaml_escapes_that_are_not_characters_name_their_line(
    project: Path, value: str, needle: str
) -> None:
    (project / "checks.yaml").write_text(CHECKS.replace("id: floor", f"id: {value}"))
    one_line_error(evalkit("run", cwd=project), 2, "checks.yaml:2:", needle)


def test_a_duplicate_key_is_reported_once_with_its_line(project: Path) -> None:
    (project / "evalkit.yaml").write_text(CONFIG + "n_resamples: 600\n")
    result = evalkit("run", cwd=project)
    one_line_error(result, 2, "evalkit.yaml:7: duplicate key 'n_resamples' (first at line 6)")
    assert result.stderr.count("evalkit.yaml") == 1


@pytest.mark.parametrize("key", ["case_timeout_s", "rate_limit"])
def test_an_infinite_deadline_or_rate_in_the_config_names_its_line(project: Path, key: str) -> None:
    (project / "evalkit.yaml").write_text(CONFIG + f"{key}: .inf\n")
    one_line_error(evalkit("run", cwd=project), 2, f"evalkit.yaml:7: {key}", "finite")
