"""Start-up of the ``evalkit`` command and of ``import evalkit``, against the floor beneath.

    uv run python benchmarks/bench_startup.py                 # 20 rounds
    uv run python benchmarks/bench_startup.py --rounds 40 --before /other/checkout/.venv/bin/python

Each round starts every command once as a whole process, in an order shuffled per round
(so a burst of load falls on all of them alike): ``python -c pass`` (the interpreter),
``python -c 'import typer'`` (the CLI toolkit, the floor of any typer command),
``python -c 'import evalkit'``, ``evalkit --help`` and ``evalkit --version``.  Wall time is
measured around the process; CPU time (user + system) from the children's rusage.  With
``--before PYTHON`` the last three also run under that interpreter (e.g. another
checkout's virtual environment, through its own console script), in the same rounds;
that checkout must hold its bytecode already (this script writes only its own).  The load
average is printed before and after: on a shared machine the medians move with it, the
ratios much less.  The last line printed is one JSON object with every median.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _commands(python: str, label: str) -> dict[str, list[str]]:
    # the console script users run, beside the interpreter that installed it
    script = Path(python).parent / "evalkit"
    cli = [str(script)] if script.exists() else [python, "-m", "evalkit"]
    return {
        f"import evalkit{label}": [python, "-c", "import evalkit"],
        f"evalkit --help{label}": [*cli, "--help"],
        f"evalkit --version{label}": [*cli, "--version"],
    }


def _once(argv: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=_ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


# The timed runs write nothing (no bytecode) and show no traceback; they read the bytecode
# the warm-up wrote, as a user's second run does.
_ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "COLUMNS": "80"}
_ENV.pop("EVALKIT_DEBUG", None)
# The warm-up of this interpreter writes its bytecode (a shell may set
# PYTHONDONTWRITEBYTECODE, and compiling every module on each start is not a start-up a
# user sees); another checkout's (--before) is never written to.
_WARM_ENV = {k: v for k, v in _ENV.items() if k != "PYTHONDONTWRITEBYTECODE"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--before", help="another interpreter whose evalkit to time alongside")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    py = sys.executable
    commands = {
        "python -c pass": [py, "-c", "pass"],
        "python -c 'import typer'": [py, "-c", "import typer"],
        **_commands(py, ""),
    }
    if args.before:
        commands.update(_commands(args.before, " (before)"))
    for name, argv in commands.items():  # warm the page cache and the bytecode once
        env = _ENV if name.endswith(" (before)") else _WARM_ENV
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
    load_start = os.getloadavg()
    rng = random.Random(args.seed)
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.rounds):
        names = list(commands)
        rng.shuffle(names)
        for name in names:
            wall, cpu = _once(commands[name])
            walls[name].append(wall)
            cpus[name].append(cpu)
    load_end = os.getloadavg()
    print(
        f"{args.rounds} rounds on {os.cpu_count()} cores; load average "
        f"{load_start[0]:.2f} at the start, {load_end[0]:.2f} at the end"
    )
    floor = statistics.median(walls["python -c 'import typer'"])
    columns = ("wall median", "wall min", "CPU median", "/ typer")
    header = f"{'command':<32} " + " ".join(f"{c:>11}" for c in columns)
    print(header)
    print("-" * len(header))
    summary: dict[str, dict[str, float]] = {}
    for name in commands:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        summary[name] = {"wall_s": round(wall, 4), "cpu_s": round(cpu, 4)}
        cells = (f"{wall:.3f}s", f"{min(walls[name]):.3f}s", f"{cpu:.3f}s", f"{wall / floor:.2f}x")
        print(f"{name:<32} " + " ".join(f"{c:>11}" for c in cells))
    print(json.dumps({"rounds": args.rounds, "load": [load_start[0], load_end[0]], **summary}))


if __name__ == "__main__":
    main()
