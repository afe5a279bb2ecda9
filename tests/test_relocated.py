"""The 0.3.0 development paths that moved into layer packages still import, with a warning."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import pytest

from evalkit._util.relocated import MOVED


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_is_its_owner_and_says_where_it_went(old: str) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {MOVED[old]}"):
        module = importlib.import_module(old)
    assert module is importlib.import_module(MOVED[old])


def test_the_table_names_only_paths_that_no_longer_exist() -> None:
    import evalkit

    base = evalkit.__path__[0]
    from pathlib import Path

    for old in MOVED:
        relative = old.removeprefix("evalkit.").replace(".", "/")
        assert not Path(base, f"{relative}.py").exists(), old
        assert not Path(base, relative).is_dir(), old


def test_a_name_outside_the_table_is_not_served() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("evalkit.no_such_module")


def test_the_gate_names_still_read_from_the_gate_package() -> None:
    from evalkit.gate import GateOptions, GateReport, evaluate_gate
    from evalkit.gate.model import GateOptions as owner_options
    from evalkit.gate.procedure import evaluate_gate as owner_gate

    assert (GateOptions, evaluate_gate) == (owner_options, owner_gate)
    assert GateReport.__module__ == "evalkit.gate.model"
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        importlib.import_module("evalkit.gate").nope  # noqa: B018


def test_a_fresh_process_reads_an_artefact_through_the_old_path() -> None:
    # what scripts written against the flat layout do (e.g. `from evalkit.artifact import ...`)
    code = (
        "import warnings; warnings.simplefilter('error');from evalkit.artifact import read_artifact"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 1
    assert "DeprecationWarning: evalkit.artifact moved to evalkit._spec.artifact" in done.stderr
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        quiet = subprocess.run(
            [sys.executable, "-W", "ignore", "-c", "from evalkit.artifact import read_artifact"],
            capture_output=True,
            text=True,
        )
    assert quiet.returncode == 0, quiet.stderr
