"""Answer metrics declared with parameters in evalkit.yaml's `metrics:` list."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit._app.pipeline import prepare
from evalkit._model.registry import get_metric
from evalkit._spec.config import load_config
from evalkit._spec.metric_entries import DeclaredMetric
from evalkit.errors import ConfigError
from evalkit.metrics.answers import JsonSchemaMatch
from helpers.artefact_docs import load_artefact
from helpers.cli import answer_target, evalkit

TARGET = answer_target({"a": "Paris [1]", "b": '{"city": "Rome"}'})

GOLDENS = (
    '{"id": "a", "query": "Capital of France?", "expected": "Paris"}\n'
    '{"id": "b", "query": "Capital of Italy?", "expected": "Rome", "answers": ["Roma"]}\n'
)

CHECKS = """\
checks:
  - id: cites
    metric: cites_source
    op: ">="
    threshold: 0.5
  - id: f1_holds
    metric: token_f1
    vs_baseline: no_significant_regression
"""

CONFIG = """\
goldens: goldens.jsonl
checks: checks.yaml
metrics:
  - token_f1
  - name: cites_source
    kind: regex_match
    pattern: '\\[\\d+\\]'
  - name: valid_city
    kind: json_schema
    schema_path: schemas/city.json
target:
  python: "qa_target:make_target"
"""

SCHEMA = {"type": "object", "required": ["city"], "properties": {"city": {"type": "string"}}}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "qa_target.py").write_text(TARGET)
    (tmp_path / "goldens.jsonl").write_text(GOLDENS)
    (tmp_path / "checks.yaml").write_text(CHECKS)
    (tmp_path / "evalkit.yaml").write_text(CONFIG)
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "city.json").write_text(json.dumps(SCHEMA))
    return tmp_path


def test_declared_entries_are_names_with_kind_and_parameters(project: Path) -> None:
    cfg = load_config(project / "evalkit.yaml")
    assert cfg.model.metrics == ["token_f1", "cites_source", "valid_city"]
    entry = cfg.model.metrics[1]
    assert isinstance(entry, DeclaredMetric)
    assert (entry.kind, entry.params) == ("regex_match", {"pattern": r"\[\d+\]"})
    prepare(cfg)
    assert get_metric("cites_source").higher_is_better is True
    schema_metric = get_metric("valid_city").fn
    assert isinstance(schema_metric, JsonSchemaMatch)
    assert schema_metric.schema == SCHEMA


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("    pattern: '[unclosed'", "invalid regular expression '[unclosed'"),
        ("    patern: 'x'", "regex_match: unknown parameter 'patern' (did you mean 'pattern'?)"),
    ],
)
def test_a_bad_declaration_is_refused_at_load_with_its_line(
    project: Path, entry: str, message: str
) -> None:
    config = project / "evalkit.yaml"
    config.write_text(CONFIG.replace("    pattern: '\\[\\d+\\]'", entry))
    with pytest.raises(ConfigError) as info:
        load_config(config)
    text = str(info.value)
    assert text.startswith(f"{config}:5: metrics[1]: metric 'cites_source': "), text
    assert message in text


def test_an_unknown_kind_is_refused_at_load(project: Path) -> None:
    config = project / "evalkit.yaml"
    config.write_text(CONFIG.replace("kind: regex_match", "kind: regexp"))
    with pytest.raises(ConfigError, match=r"evalkit\.yaml:\d+: .*'kind' must be one of"):
        load_config(config)


def test_a_broken_schema_file_names_its_line_before_anything_runs(project: Path) -> None:
    (project / "schemas" / "city.json").write_text('{\n  "type": "object",\n  oops\n}\n')
    with pytest.raises(Exception, match=r"city\.json:3:3: invalid JSON in the schema"):
        prepare(load_config(project / "evalkit.yaml"))


@pytest.mark.parametrize(
    ("schema_file", "content", "message"),
    [
        ("missing.json", None, "json_schema: schema file not found: "),
        ("broken.json", '{\n  "type": "object",\n  oops\n}\n', "broken.json:3:3: invalid JSON"),
        ("dangling.json", '{"$ref": "#/$defs/order"}', "a $ref does not resolve"),
    ],
)
def test_a_schema_file_problem_is_one_line_naming_the_config_line_exit_2(
    project: Path, schema_file: str, content: str | None, message: str
) -> None:
    # Before: "evalkit.yaml: metric 'valid_city': json_schema: schema file not found: ..."
    # (the schema is read after the config, and the entry's line was lost).
    if content is not None:
        (project / "schemas" / schema_file).write_text(content)
    config = project / "evalkit.yaml"
    config.write_text(CONFIG.replace("schemas/city.json", f"schemas/{schema_file}"))
    result = evalkit("run", cwd=project)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert lines[0].startswith("evalkit: evalkit.yaml:8: metric 'valid_city': ")
    assert message in lines[0]
    if content is None:
        assert "fix schema_path" in lines[0]


def test_run_scores_declared_metrics_and_changed_parameters_are_incomparable(
    project: Path,
) -> None:
    first = evalkit("run", "--out", "base.json", cwd=project)
    assert first.returncode == 0, first.stderr
    rows = {r["id"]: r["metrics"] for r in load_artefact(project / "base.json")["rows"]}
    assert rows["a"] == {"token_f1": pytest.approx(2 / 3), "cites_source": 1.0, "valid_city": 0.0}
    # {"city": "Rome"} normalises to "city rome": F1 2/3 against "rome"
    assert rows["b"] == {"token_f1": pytest.approx(2 / 3), "cites_source": 0.0, "valid_city": 1.0}
    same = evalkit("gate", "--baseline", "base.json", cwd=project)
    assert same.returncode == 0, same.stdout + same.stderr
    config = project / "evalkit.yaml"
    config.write_text(CONFIG.replace("'\\[\\d+\\]'", "'\\[\\d\\]'"))
    (project / "checks.yaml").write_text(
        CHECKS + "  - id: cites_held\n    metric: cites_source\n"
        "    vs_baseline: no_significant_regression\n"
    )
    changed = evalkit("gate", "--baseline", "base.json", cwd=project)
    assert "incomparable" in changed.stdout, changed.stdout + changed.stderr
