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

_HELP = """
import contextlib, io, sys
from evalkit.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    main(["--help"])
"""


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


def test_import_evalkit_loads_no_on_demand_package(after_import: set[str]) -> None:
    assert _packages(after_import) & {*ON_DEMAND, "typer", "click"} == set()


def test_help_loads_the_cli_toolkit_and_nothing_else_on_demand(after_help: set[str]) -> None:
    assert "typer" in _packages(after_help)  # drawing the help is typer's job
    assert _packages(after_help) & set(ON_DEMAND) == set()


def test_help_runs_no_command_module(after_help: set[str]) -> None:
    ran = {m for m in after_help for name in NOT_FOR_HELP if m == name or m.startswith(name + ".")}
    assert ran == set()


def test_the_lazy_front_door_still_serves_every_name() -> None:
    # What is not imported up front is imported on first use, from its owner.
    code = (
        "import evalkit\n"
        "from evalkit import load_checks, load_goldens, paired_bootstrap, HttpTarget\n"
        "print(load_goldens.__module__, paired_bootstrap.__module__, HttpTarget.__module__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == [
        "evalkit._spec.golden_loaders",
        "evalkit.stats.significance",
        "evalkit.targets.http",
    ]
