from __future__ import annotations

from pathlib import Path

import pytest

from evalkit import ConfigError
from evalkit._app.pipeline import build_target
from evalkit._spec.config import expand_env, load_config
from evalkit.goldens import GoldenCase
from evalkit.targets.http_template import render_payload

MINIMAL = """\
goldens: goldens.jsonl
checks: checks.yaml
metrics: [recall@1]
target:
  python: "mod:factory"
"""


def write(tmp_path: Path, text: str, name: str = "evalkit.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_minimal_config_defaults(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, MINIMAL))
    assert cfg.name == "evalkit"
    assert cfg.model.seed == 42
    assert cfg.model.n_resamples == 10_000
    assert cfg.model.concurrency == 1
    assert cfg.resolve("goldens.jsonl") == tmp_path / "goldens.jsonl"
    assert cfg.output_path == tmp_path / ".evalkit/runs/evalkit.json"


PYTHON = '  python: "mod:factory"\n'


@pytest.mark.parametrize(
    ("text", "match"),
    [
        pytest.param(
            MINIMAL + "treshold: 3\n",
            r"evalkit.yaml:6: unknown key 'treshold'",
            id="unknown-top-level-key-names-key-and-line",
        ),
        pytest.param(
            MINIMAL.replace(PYTHON, PYTHON + "  pyhton: x\n"),
            r":6: unknown key 'target.pyhton'",
            id="unknown-nested-key-names-key-path",
        ),
        pytest.param(
            MINIMAL.replace("checks: checks.yaml\n", ""),
            "missing required key 'checks'",
            id="missing-required-key",
        ),
        pytest.param(
            MINIMAL.replace(PYTHON, PYTHON + '  http: {url: "http://x", extract: "a"}\n'),
            "exactly one of 'python'",
            id="target-needs-exactly-one-kind",
        ),
        pytest.param(
            MINIMAL.replace("mod:factory", "no-colon"),
            "pkg.module:factory",
            id="bad-python-reference",
        ),
        pytest.param(
            MINIMAL.replace(PYTHON, '  http: {url: "http://x", extract: "results[."}\n'),
            "invalid JMESPath expression",
            id="bad-jmespath",
        ),
        pytest.param(
            "goldens: [unclosed\nchecks: x\n",
            r"evalkit.yaml:\d+: invalid YAML",
            id="broken-yaml-names-line",
        ),
        pytest.param(
            MINIMAL + "goldens: other.jsonl\n",
            "duplicate key 'goldens'",
            id="duplicate-key-refused",
        ),
        pytest.param("- a\n- b\n", "expected a mapping", id="not-a-mapping"),
        pytest.param(
            MINIMAL.replace("[recall@1]", "[recall@1, recall@1]"),
            "listed more than once: recall@1",
            id="duplicate-metric",
        ),
        pytest.param(
            MINIMAL + "concurrency: 0\n", r"concurrency", id="concurrency-must-be-positive"
        ),
        pytest.param(
            MINIMAL + "judge:\n  metric: helpfulness\n  model: m\n",
            "exactly one of 'rubric' or 'rubric_file'",
            id="judge-needs-one-rubric",
        ),
        pytest.param(
            MINIMAL + "baseline: {store: file}\n",
            "needs a 'path'",
            id="file-baseline-needs-path",
        ),
    ],
)
def test_a_config_is_refused_in_one_line(tmp_path: Path, text: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        load_config(write(tmp_path, text))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "nope.yaml")


def test_judge_single_mapping_becomes_a_list(tmp_path: Path) -> None:
    text = MINIMAL + "judge:\n  metric: helpfulness\n  model: m\n  rubric: r\n"
    cfg = load_config(write(tmp_path, text))
    assert [j.metric for j in cfg.model.judge] == ["helpfulness"]


def test_expand_env() -> None:
    env = {"HOST": "example.test", "TOKEN": "s3cret"}
    value = {"url": "http://${HOST}/x", "h": ["Bearer ${TOKEN}", "${MISSING:-dflt}"]}
    assert expand_env(value, env, "target.http") == {
        "url": "http://example.test/x",
        "h": ["Bearer s3cret", "dflt"],
    }


def test_expand_env_missing_names_variable_and_key() -> None:
    with pytest.raises(ConfigError, match=r"target.http.url: environment variable NOPE is not set"):
        expand_env({"url": "http://${NOPE}/"}, {}, "target.http")


def test_render_payload_placeholders_keep_types() -> None:
    case = GoldenCase(
        id="c1", query="cheap pizza", relevant=frozenset({"b", "a"}), context={"k": 5}
    )
    template = {"q": "{{query}}", "k": "{{context.k}}", "ids": "{{relevant}}", "s": "id={{id}}!"}
    assert render_payload(template, case) == {
        "q": "cheap pizza",
        "k": 5,
        "ids": ["a", "b"],
        "s": "id=c1!",
    }


def test_render_payload_unknown_field_names_case() -> None:
    from evalkit import TargetError

    case = GoldenCase(id="c1", query="q")
    with pytest.raises(TargetError, match=r"\{\{nope\}\}.*case 'c1'"):
        render_payload({"x": "{{nope}}"}, case)


def test_build_target_missing_module(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, MINIMAL.replace("mod:factory", "no_such_module_xyz:f")))
    with pytest.raises(ConfigError, match="cannot import 'no_such_module_xyz'"):
        build_target(cfg)


def test_build_http_target_needs_env(tmp_path: Path) -> None:
    text = MINIMAL.replace(
        '  python: "mod:factory"\n',
        '  http: {url: "http://${EVALKIT_TEST_UNSET_HOST}/s", extract: "results[].id"}\n',
    )
    cfg = load_config(write(tmp_path, text))
    with pytest.raises(ConfigError, match="EVALKIT_TEST_UNSET_HOST is not set"):
        build_target(cfg, env={})
