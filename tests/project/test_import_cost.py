"""`import evalkit` and `evalkit --help` load only what they use (issue 22).

Each runs in a fresh interpreter, which then lists what it imported.  A library
import or a help screen that pulls in a YAML parser, numpy, an HTTP stack or an SDK
is slow for every user of every command; a later import at a module's top would
quietly bring that back, so the sets are pinned here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# Third-party packages that only some commands or library calls need.
ON_DEMAND = (
    "anthropic",
    "filelock",
    "github",  # PyGithub
    "h11",
    "httpx",
    "jmespath",
    "jsonschema",
    "numpy",
    "openai",
    "pandas",
    "pydantic",
    "requests",
    "rich",
    "scipy",
    "yaml",  # PyYAML
)

# evalkit's own modules that reach for those packages, or that only a command runs.
NOT_FOR_HELP = (
    "evalkit._util.yaml_files",
    "evalkit._spec.artifact",
    "evalkit._spec.config",
    "evalkit._spec.golden_loaders",
    "evalkit._model.registry",
    "evalkit.metrics",
    "evalkit.gate.procedure",
    "evalkit.github",
    "evalkit._app.pipeline",
    "evalkit.report",
    "evalkit.stats.significance",
    "evalkit.stats.compare",
    "evalkit.targets.http",
)

_REPORT = """
import json, sys
print(json.dumps(sorted(sys.modules)))
"""

_CLI = """
import contextlib, io, sys
from evalkit.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    main([%r])
"""
_HELP = _CLI % "--help"
_VERSION = _CLI % "--version"

# All of evalkit that `import evalkit` may load: the package root and its leaves.
IMPORT_EVALKIT = {
    "evalkit",
    "evalkit._model",
    "evalkit._model.builtin_hook",
    "evalkit._util",
    "evalkit._util.log",  # the package logger's NullHandler (docs/logging.md)
    "evalkit._version",
    "evalkit.errors",
    "evalkit.exit_codes",
}
# ... and what the help screen adds: the command tree, its limits, the signal guard.
HELP_EVALKIT = IMPORT_EVALKIT | {
    "evalkit._util",
    "evalkit._util.limits",
    "evalkit._util.signals",
    "evalkit.cli",
    "evalkit.cli.action",
    "evalkit.cli.baselines",
    "evalkit.cli.common",
    "evalkit.cli.gate",
    "evalkit.cli.inspect",
    "evalkit.cli.root",
    "evalkit.cli.run",
    "evalkit.cli.scaffold",
    "evalkit.cli.session",
    "evalkit.cli.trec",
}


def _loaded(code: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", code + _REPORT], capture_output=True, text=True, check=True
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def _packages(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


@pytest.fixture(scope="module")
def after_import() -> set[str]:
    return _loaded("import evalkit\n")


@pytest.fixture(scope="module")
def after_help() -> set[str]:
    return _loaded(_HELP)


@pytest.fixture(scope="module")
def after_version() -> set[str]:
    return _loaded(_VERSION)


def _evalkit_modules(modules: set[str]) -> set[str]:
    return {m for m in modules if m == "evalkit" or m.startswith("evalkit.")}


def test_import_evalkit_loads_only_the_root_and_its_leaves(after_import: set[str]) -> None:
    # A new eager import in evalkit/__init__.py lands here: make it lazy (_LAZY) instead.
    assert _evalkit_modules(after_import) == IMPORT_EVALKIT


def test_help_and_version_load_only_the_command_tree(
    after_help: set[str], after_version: set[str]
) -> None:
    # A command module that imports its use case at the top lands here: import it inside
    # the command function, where it runs.
    assert _evalkit_modules(after_help) == HELP_EVALKIT
    assert _evalkit_modules(after_version) <= HELP_EVALKIT
    assert _packages(after_version) & {*ON_DEMAND, "socket", "email", "ssl"} == set()
    assert _packages(after_help) & {"socket", "email", "ssl"} == set()


def test_import_evalkit_loads_no_on_demand_package(after_import: set[str]) -> None:
    assert _packages(after_import) & {*ON_DEMAND, "typer", "click"} == set()


def test_help_loads_the_cli_toolkit_and_nothing_else_on_demand(after_help: set[str]) -> None:
    assert "typer" in _packages(after_help)  # drawing the help is typer's job
    assert _packages(after_help) & set(ON_DEMAND) == set()


def test_help_runs_no_command_module(after_help: set[str]) -> None:
    ran = {m for m in after_help for name in NOT_FOR_HELP if m == name or m.startswith(name + ".")}
    assert ran == set()


@pytest.mark.parametrize(
    "code",
    [
        "from evalkit.runner import METRICS; ok = 'recall' in METRICS",
        "from evalkit._model.registry import get_metric; ok = get_metric('ndcg@10') is not None",
        "from evalkit import registered; ok = 'jsonl' in registered()['loaders']",
        "from evalkit.registry import _LOADERS as L, _METRICS as M; ok = 'csv' in L and bool(M)",
    ],
)
def test_the_built_ins_are_registered_whichever_module_a_program_starts_from(code: str) -> None:
    # No module imports evalkit.metrics first here: the registry's first use registers them.
    done = subprocess.run(
        [sys.executable, "-c", code + "\nprint(ok)"], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["True"]


def test_a_client_loader_still_clashes_with_a_built_in_before_any_lookup() -> None:
    code = (
        "from evalkit import register_loader, RegistryError\n"
        "try:\n    register_loader('csv')(print)\nexcept RegistryError:\n    print('clash')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["clash"]


def test_the_lazy_front_door_still_serves_every_name() -> None:
    # What is not imported up front is imported on first use, from its owner.
    code = (
        "import evalkit\n"
        "from evalkit import load_checks, load_goldens, paired_bootstrap, HttpTarget\n"
        "print(load_goldens.__module__, paired_bootstrap.__module__, HttpTarget.__module__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == [
        "evalkit._spec.dataset_hubs",  # files, or hf:/irds: datasets (docs/loaders.md)
        "evalkit.stats.significance",
        "evalkit.targets.http",
    ]


@pytest.mark.parametrize("command", ["run --trec-run", "score"])
def test_scoring_a_trec_run_loads_no_gate_pipeline_or_yaml(tmp_path: Path, command: str) -> None:
    # Scoring a file runs no target and decides nothing (issue 27): the pipeline pulled in
    # the gate and its statistics, a third of the command's time on a 10^5-line run.
    (tmp_path / "q.txt").write_text("301 0 d1 1\n301 0 d2 0\n")
    (tmp_path / "r.txt").write_text("301 Q0 d1 1 2.0 t\n301 Q0 d3 2 1.0 t\n")
    files = (
        ["--trec-run", "r.txt", "--qrels", "q.txt"] if command != "score" else ["r.txt", "q.txt"]
    )
    argv = [*command.split()[:1], *files, "--metrics", "ndcg@10", "--out", "o.json"]
    code = (
        f"import contextlib, io, os, sys\nos.chdir({str(tmp_path)!r})\n"
        "from evalkit.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        f"    main({argv!r})\n"
    )
    loaded = _loaded(code)
    assert (tmp_path / "o.json").is_file()  # the command ran
    heavy = ("evalkit.gate", "evalkit._app.pipeline", "evalkit.stats", "evalkit._spec.config")
    assert {m for m in loaded if m.startswith(heavy)} == set()
    # Nor what running a target needs: the engine (its threads, targets, judge guard),
    # the golden loaders (csv, YAML values: the metric tables fill apart from the loader
    # table) and -k/--case filters (issue 27).
    unused = ("evalkit._engine", "evalkit._spec.golden_loaders", "evalkit._spec.case_filter")
    assert {m for m in loaded if m.startswith(unused)} == set()
    assert "csv" not in loaded
    # typer 0.29 built each option's coercion with pydantic: 0.3 s of a 0.5 s command.
    assert _packages(loaded) & {"yaml", "scipy", "httpx", "h11", "pydantic"} == set()


def test_scoring_a_trec_run_in_the_library_loads_only_the_trec_modules(tmp_path: Path) -> None:
    # Scoring a file needs the reader, the registry and the formula engine (numpy), and
    # nothing that runs a target, decides a verdict or grades with a judge (issue 27).
    (tmp_path / "q.txt").write_text("301 0 d1 1\n301 0 d2 0\n")
    (tmp_path / "r.txt").write_text("301 Q0 d1 1 2.0 t\n301 Q0 d3 2 1.0 t\n")
    code = (
        "from evalkit.trec import score_trec_run\n"
        f"r = score_trec_run({str(tmp_path / 'r.txt')!r}, {str(tmp_path / 'q.txt')!r}, "
        "['ndcg@10', 'map@1000', 'recall@1000', 'precision@10', 'mrr@1000', 'hit_rate@5'])\n"
        "assert r.per_query[0].metrics['mrr@1000'] == 1.0\n"
    )
    everything = _loaded(code)
    loaded = _evalkit_modules(everything) - IMPORT_EVALKIT
    layers = {".".join(m.split(".")[:2]) for m in loaded}
    assert layers == {"evalkit._model", "evalkit._spec", "evalkit._util", "evalkit.metrics"} | {
        "evalkit.trec"
    }
    assert {m for m in loaded if m.startswith("evalkit._spec.")} == {
        "evalkit._spec.trec",
        "evalkit._spec.trec_io",
        "evalkit._spec.trec_read",
        "evalkit._spec.trec_run",
    }
    assert not {m for m in loaded if m.startswith("evalkit.metrics.judge")}
    assert _packages(everything) & (set(ON_DEMAND) - {"numpy"}) == set()


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        # A metric lookup fills the metric tables alone; a loader lookup, the loader table.
        (
            "from evalkit._model.registry import get_metric; get_metric('ndcg@10')",
            ["True", "False"],
        ),
        ("from evalkit._model.registry import get_loader; get_loader('csv')", ["False", "True"]),
        ("from evalkit import registered; registered()", ["True", "True"]),
    ],
)
def test_the_metric_and_loader_tables_fill_apart(code: str, expected: list[str]) -> None:
    report = (
        "\nimport sys\nfrom evalkit._model import registry as r\n"
        "print('ndcg' in r._families, 'csv' in r._loaders)\n"
        "print('evalkit.metrics.builtin' in sys.modules, "
        "'evalkit._spec.golden_loaders' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code + report], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == expected * 2
