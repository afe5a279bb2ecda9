"""Stress the signal handling: a blocked run, a signal on a random thread, many times, under load.

    uv run python scripts/stress_signals.py            # 100 rounds, one busy process per core
    uv run python scripts/stress_signals.py --rounds 300 --load 4 --seed 7

Each round starts a real ``evalkit run`` or ``evalkit gate`` (concurrency 1 or 3) on a
silent target, waits until the target has accepted every connection the run makes (so the
run is asleep in ``recv``, whose timeout is 120 s), picks one of its threads at random (the
main thread included) and sends it SIGTERM or SIGINT with ``tgkill``.  A round passes when
the process exits with 128 + the signal, says so on stderr within 1 s and ends within 10 s.
Meanwhile ``--load`` processes spin on the CPU, as a starved CI runner would.

Prints one line per failure, a summary of the report and exit times (median, 95th
percentile, maximum) per kind of thread, and exits 1 when any round failed.  Linux only.
Kept out of the test suite (100 rounds take 3-9 minutes on 2 cores, and it loads the
machine on purpose);
``tests/cli/test_cli_signals.py`` runs the same rounds deterministically, one thread each.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import signal
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

# The harness lives with the tests.
from signal_harness import (
    can_tgkill,
    expected_status,
    silent_target,
    start_blocked,
    tgkill,
    threads,
)

REPORT_BOUND_S = 1.0
EXIT_BOUND_S = 10.0


def _spin() -> None:  # pragma: no cover - runs in a child process until terminated
    while True:
        pass


def _round(
    rng: random.Random, root: Path, index: int
) -> tuple[str, float | None, float | None, str | None]:
    """(thread kind, seconds to the report, seconds to the exit, failure or None)."""
    command = rng.choice(["run", "gate"])
    concurrency = rng.choice([1, 3])
    sig = rng.choice([signal.SIGTERM, signal.SIGINT])
    with silent_target() as target:
        blocked = start_blocked(
            root / f"r{index}", target, command=command, concurrency=concurrency
        )
        tids = threads(blocked.pid)
        position = rng.randrange(len(tids))
        kind = "main" if position == 0 else f"other-{'c3' if concurrency > 1 else 'c1'}"
        sent = time.monotonic()
        tgkill(blocked.pid, tids[position], sig)
        try:
            status, ended = blocked.finish(timeout_s=60)
        except Exception as exc:  # a hang is the failure this reports
            blocked.proc.kill()
            blocked.proc.wait()
            return kind, None, None, f"{command} c={concurrency} {sig.name}: {exc}"
    reported = blocked.reported_at()
    report_s = None if reported is None else reported - sent
    exit_s = ended - sent
    label = f"round {index}: {command} c={concurrency} {sig.name} thread {position}/{len(tids)}"
    if status != expected_status(sig):
        return kind, report_s, exit_s, f"{label}: exit {status}, stderr {blocked.stderr!r}"
    if report_s is None or report_s >= REPORT_BOUND_S:
        return kind, report_s, exit_s, f"{label}: reported after {report_s} s"
    if exit_s >= EXIT_BOUND_S:
        return kind, report_s, exit_s, f"{label}: ended after {exit_s:.2f} s"
    if "Traceback" in blocked.stderr:
        return kind, report_s, exit_s, f"{label}: traceback on stderr"
    return kind, report_s, exit_s, None


def _summary(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"median {statistics.median(ordered):.3f} s, p95 {p95:.3f} s, max {ordered[-1]:.3f} s"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--load", type=int, default=os.cpu_count() or 2, help="busy processes")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    if not can_tgkill():
        print("tgkill is Linux-only: nothing to stress here", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.load)]
    for spinner in spinners:
        spinner.start()
    failures: list[str] = []
    reports: dict[str, list[float]] = defaultdict(list)
    exits: dict[str, list[float]] = defaultdict(list)
    try:
        with tempfile.TemporaryDirectory(prefix="evalkit-stress-") as tmp:
            for index in range(args.rounds):
                kind, report_s, exit_s, failure = _round(rng, Path(tmp), index)
                if report_s is not None:
                    reports[kind].append(report_s)
                if exit_s is not None:
                    exits[kind].append(exit_s)
                if failure is not None:
                    failures.append(failure)
                    print(f"FAIL {failure}", flush=True)
    finally:
        for spinner in spinners:
            spinner.terminate()
    print(f"{args.rounds} rounds, {args.load} busy process(es), seed {args.seed}")
    for kind in sorted(exits):
        print(
            f"  {kind:9} {len(exits[kind]):4} rounds; report {_summary(reports[kind])}; "
            f"exit {_summary(exits[kind])}"
        )
    print(f"{args.rounds - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
