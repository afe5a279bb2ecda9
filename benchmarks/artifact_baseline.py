"""The artefact module of an earlier evalkit, loaded from git into this process.

Used by ``bench_artifact_read.py`` and ``bench_artifact_write.py`` to time this tree's
reader and writer against an earlier revision's (default ``61eb538``: the code before
#27) in the same run.  The old ``artifact`` module gets that revision's own
``_bounded``, ``results`` and ``formats`` (so it writes and reads the schema it knew),
and today's atomic writer.  Its writer takes this tree's run objects: it reads them
through the attributes both versions share.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_BASELINE = "61eb538"


def _show(rev: str, *paths: str) -> str:
    # Revisions before the layer move kept these modules flat under src/evalkit/.
    for where in paths:
        done = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{rev}:src/evalkit/{where}"],
            check=False,
            capture_output=True,
            text=True,
        )
        if done.returncode == 0:
            return done.stdout
    raise SystemExit(f"{rev} has none of " + ", ".join(f"src/evalkit/{p}" for p in paths))


def _module(name: str, source: str, replace: dict[str, str]) -> types.ModuleType:
    for old, new in replace.items():
        source = source.replace(old, new)
    module = types.ModuleType(name)
    module.__dict__["__name__"] = name
    sys.modules[name] = module
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    return module


def baseline_artifact_module(rev: str = DEFAULT_BASELINE) -> types.ModuleType:
    """``evalkit/artifact.py`` as of ``rev`` (its ``read_artifact``, ``write_artifact``)."""
    tag = f"_bench_{rev}"
    bounded = _module(
        f"{tag}_bounded",
        _show(rev, "_util/bounded.py", "_bounded.py"),
        {"from evalkit.limits import": "from evalkit._util.limits import"},
    )
    results = _module(f"{tag}_results", _show(rev, "_model/results.py", "results.py"), {})
    formats = _module(f"{tag}_formats", _show(rev, "_model/formats.py", "formats.py"), {})
    return _module(
        f"{tag}_artifact",
        _show(rev, "_spec/artifact.py", "artifact.py"),
        {
            "from evalkit import _bounded\n": f"import {bounded.__name__} as _bounded\n",
            "from evalkit._util import bounded as _bounded\n": (
                f"import {bounded.__name__} as _bounded\n"
            ),
            "from evalkit.results import": f"from {results.__name__} import",
            "from evalkit._model.results import": f"from {results.__name__} import",
            "from evalkit.formats import": f"from {formats.__name__} import",
            "from evalkit._model.formats import": f"from {formats.__name__} import",
            "from evalkit._atomic import": "from evalkit._util.atomic import",
            "from evalkit.metric_identity import": "from evalkit._model.metric_identity import",
        },
    )


def figures(
    cases: int,
    baseline: str,
    cpu: dict[str, float],
    wall: dict[str, float],
    loads: tuple[float, float],
) -> dict[str, Any]:
    """The keys both benchmarks' last line shares: this tree (``ours``) against ``old``."""
    return {
        "cases": cases,
        "baseline": baseline,
        "evalkit_cpu_s": round(cpu["ours"], 3),
        "baseline_cpu_s": round(cpu["old"], 3),
        "evalkit_wall_s": round(wall["ours"], 3),
        "baseline_wall_s": round(wall["old"], 3),
        "cpu_speedup": round(cpu["old"] / cpu["ours"], 2),
        "wall_speedup": round(wall["old"] / wall["ours"], 2),
        "load_avg_1m_before": round(loads[0], 2),
        "load_avg_1m_after": round(loads[1], 2),
    }


def medians(
    timings: dict[str, list[tuple[float, float]]],
) -> tuple[dict[str, float], dict[str, float]]:
    """(CPU, wall) medians of each series of ``(wall, CPU)`` timings."""
    cpu = {k: statistics.median(c for _, c in v) for k, v in timings.items()}
    wall = {k: statistics.median(w for w, _ in v) for k, v in timings.items()}
    return cpu, wall
