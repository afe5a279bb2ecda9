"""The tiny evalkit project most CLI tests run: three cases, a python target, two checks.

Also :func:`one_line_error`, the shape every bad input must take on stderr.
"""

from __future__ import annotations

import subprocess

TARGET_MODULE = """
from evalkit import CallableTarget

RANKINGS = {"a": ["d1", "d2"], "b": ["d3", "d1"], "c": ["d2", "d9"]}


def make_target(shift: bool = False):
    def rank(case):
        ids = RANKINGS[case.id]
        return ids[::-1] if shift else ids
    return CallableTarget(rank, name="shifted" if shift else "plain")
"""

GOLDENS = (
    '{"id": "a", "query": "alpha", "relevant": ["d1"]}\n'
    '{"id": "b", "query": "beta", "relevant": ["d3"]}\n'
    '{"id": "c", "query": "gamma", "relevant": ["d2"]}\n'
)

CHECKS = """\
checks:
  - id: floor
    metric: recall@1
    op: ">="
    threshold: 0.5
  - id: no_regression
    metric: ndcg@10
    vs_baseline: no_significant_regression
"""

CONFIG = """\
goldens: goldens.jsonl
checks: checks.yaml
metrics: [recall@1, ndcg@10]
target:
  python: "tiny_target:make_target"
n_resamples: 500
"""


def one_line_error(result: subprocess.CompletedProcess[str], code: int, *needles: str) -> None:
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("evalkit: ")
    assert "Traceback" not in result.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
