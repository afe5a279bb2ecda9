"""A metric's fingerprint follows what its code does: comments, docstrings and layout do not
count; constants, operators, the values it reads and its helpers do; ``version=`` overrides."""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from evalkit._model import registry
from evalkit._model.code_identity import code_hash
from evalkit._model.registry import get_metric, register_metric
from evalkit.errors import RegistryError

_counter = itertools.count()

BASE = '''
THRESHOLD = 0.5


def _hits(response, case):
    return [i for i in response.ranked_ids[:3] if i in case.relevant]


def metric(response, case):
    """Share of the top 3 that is relevant."""
    return len(_hits(response, case)) / 3 >= THRESHOLD
'''

SAME_BEHAVIOUR = {
    "a comment": BASE.replace(
        "def metric(response, case):", "# the headline metric\ndef metric(response, case):  # hi"
    ),
    "the docstring": BASE.replace('"""Share of the top 3 that is relevant."""', '"""Changed."""'),
    "no docstring": BASE.replace('    """Share of the top 3 that is relevant."""\n', ""),
    "layout": BASE.replace(
        "len(_hits(response, case)) / 3", "len( _hits( response,case ) )/3"
    ).replace("\n\n\ndef metric", "\n\n\n\n\ndef metric"),
    "the function's name": BASE.replace("def metric(", "def metric_v2(") + "\nmetric = metric_v2\n",
    "a decorator": BASE.replace(
        "def metric(", "def tag(fn):\n    return fn\n\n\n@tag\ndef metric("
    ),
    "a helper's comment": BASE.replace(
        "    return [i for", "    # the relevant ids among the first three\n    return [i for"
    ),
    "an unrelated module constant": BASE + "\nOTHER = 7\n",
}

DIFFERENT_BEHAVIOUR = {
    "a constant in the body": BASE.replace("/ 3 >=", "/ 4 >="),
    "an operator": BASE.replace(">= THRESHOLD", "> THRESHOLD"),
    "a module constant it reads": BASE.replace("THRESHOLD = 0.5", "THRESHOLD = 0.6"),
    "a helper it calls": BASE.replace("[:3]", "[:5]"),
    "a name it reads": BASE.replace("response.ranked_ids[:3]", "response.ranked_ids[1:3]"),
    "a default argument": BASE.replace(
        "def metric(response, case):", "def metric(response, case, k=2):"
    ),
}


def load(source: str, tmp_path: Path) -> ModuleType:
    """Import ``source`` as a fresh module from its own file (inspect reads it back)."""
    name = f"plugin_{next(_counter)}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # as an imported plugin is: inspect finds classes through it
    spec.loader.exec_module(module)
    return module


def metric_hash(source: str, tmp_path: Path) -> str:
    return code_hash(load(source, tmp_path).metric)


@pytest.mark.parametrize("edit", sorted(SAME_BEHAVIOUR))
def test_edits_that_do_not_change_behaviour_keep_the_fingerprint(edit: str, tmp_path: Path) -> None:
    assert SAME_BEHAVIOUR[edit] != BASE
    assert metric_hash(SAME_BEHAVIOUR[edit], tmp_path) == metric_hash(BASE, tmp_path)


@pytest.mark.parametrize("edit", sorted(DIFFERENT_BEHAVIOUR))
def test_edits_that_change_behaviour_change_the_fingerprint(edit: str, tmp_path: Path) -> None:
    assert metric_hash(DIFFERENT_BEHAVIOUR[edit], tmp_path) != metric_hash(BASE, tmp_path)


def test_every_behaviour_change_is_told_apart_from_every_other(tmp_path: Path) -> None:
    hashes = {edit: metric_hash(src, tmp_path) for edit, src in DIFFERENT_BEHAVIOUR.items()}
    assert len(set(hashes.values())) == len(hashes)


def test_closure_values_count(tmp_path: Path) -> None:
    source = """
    def make(cutoff):
        def metric(response, case):
            return float(len(response.ranked_ids) > cutoff)
        return metric
    """
    module = load(source, tmp_path)
    assert code_hash(module.make(3)) == code_hash(module.make(3))
    assert code_hash(module.make(3)) != code_hash(module.make(4))


def test_a_callable_object_counts_its_class_and_its_plain_attributes(tmp_path: Path) -> None:
    source = '''
    class AtLeast:
        """Scores 1 when enough ids came back."""

        def __init__(self, n):
            self.n = n

        def __call__(self, response, case):
            return float(len(response.ranked_ids) >= self.n)  # the rule
    '''
    module = load(source, tmp_path)
    edited = load(source.replace("# the rule", "# a comment").replace("enough", "many"), tmp_path)
    assert code_hash(module.AtLeast(2)) == code_hash(edited.AtLeast(2))
    assert code_hash(module.AtLeast(2)) != code_hash(module.AtLeast(3))
    changed = load(source.replace(">= self.n", "> self.n"), tmp_path)
    assert code_hash(module.AtLeast(2)) != code_hash(changed.AtLeast(2))


def test_recursive_helpers_terminate(tmp_path: Path) -> None:
    source = """
    def metric(response, case):
        return _depth(len(response.ranked_ids))

    def _depth(n):
        return 0.0 if n <= 0 else 1.0 + _depth(n - 1)
    """
    assert metric_hash(source, tmp_path) == metric_hash(source, tmp_path)
    assert metric_hash(source, tmp_path) != metric_hash(source.replace("1.0 +", "2.0 +"), tmp_path)


def test_unreadable_source_falls_back_to_the_qualified_name() -> None:
    assert code_hash(len) == hashlib.sha256(b"qualname:builtins.len").hexdigest()


# The serialisation is part of every stored baseline: this pins it, so a change to it (or
# a Python release that parses the same code differently) is seen here, not in the field.
PINNED_SOURCE = '''
SCALE = 2


def metric(response, case):
    """Docstring."""
    top = [i for i in response.ranked_ids[:SCALE] if i in case.relevant]  # hits
    return sum(1.0 for _ in top) / SCALE if top else 0.0
'''
PINNED_HASH = "b2bad168f0fd0582e72ff1ac0faa7a84c0aa1778d3bae20f29252a1b221743de"


def test_the_fingerprint_of_a_known_function_is_pinned(tmp_path: Path) -> None:
    assert metric_hash(PINNED_SOURCE, tmp_path) == PINNED_HASH


# --- through the registry -----------------------------------------------------------------


def registered_fingerprint(source: str, tmp_path: Path, **kwargs: Any) -> str:
    with registry.isolated():
        register_metric("share_top3", higher_is_better=True, **kwargs)(
            load(source, tmp_path).metric
        )
        return get_metric("share_top3").fingerprint


def test_a_registered_metric_keeps_its_fingerprint_across_a_comment_edit(tmp_path: Path) -> None:
    base = registered_fingerprint(BASE, tmp_path)
    assert registered_fingerprint(SAME_BEHAVIOUR["a comment"], tmp_path) == base
    assert registered_fingerprint(DIFFERENT_BEHAVIOUR["an operator"], tmp_path) != base


def test_a_declared_version_overrides_the_code(tmp_path: Path) -> None:
    v2 = registered_fingerprint(BASE, tmp_path, version="2")
    changed = DIFFERENT_BEHAVIOUR["a constant in the body"]
    assert registered_fingerprint(changed, tmp_path, version="2") == v2
    assert registered_fingerprint(BASE, tmp_path, version="3") != v2
    assert registered_fingerprint(BASE, tmp_path) != v2


@pytest.mark.parametrize("bad", ["", True, 2.5, ["2"]])
def test_a_malformed_version_is_refused(bad: object) -> None:
    with registry.isolated(), pytest.raises(RegistryError, match="metric version"):
        register_metric("m", higher_is_better=True, version=bad)  # type: ignore[arg-type]
