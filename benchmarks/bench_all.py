"""Every performance row of issue #27 against its peer, in one run, with the load average.

    uv run python benchmarks/bench_all.py --trec-eval /path/to/trec_eval \\
        --real-run input.fub03IeOLKe3.gz --real-qrels robust03_qrels.txt
    uv run python benchmarks/bench_all.py --quick      # smaller sizes, a few minutes less

Runs each benchmark of this folder in its own process, one after the other (so none
shares the machine with another), reads the JSON object each prints last, and prints one
table: the work, evalkit's figure, the peer's figure measured in the same benchmark run,
their ratio, the target of #27 and whether it holds, and the 1-minute load average of
the moment.  The rows:

* TREC scoring, whole process, library and CLI against trec_eval's C
  (``bench_trec.py``; skipped, saying why, without a trec_eval binary);
* ``evalkit --help`` and ``--version`` against ``import typer`` (``bench_startup.py``);
* reading and writing a 10^5-case artefact against the code before #27
  (``bench_artifact_read.py`` / ``bench_artifact_write.py``);
* the gate at 10^3 / 10^4 / 10^5 cases against its 30 s target (``bench_gate.py``;
  its peer, the naive tests, where it runs);
* the runner against nginx at c = 32 / 64 / 128 against the ideal wall time, measured
  with no target (``bench_runner.py``; skipped without nginx);
* the paired bootstrap at n = 10^5 against scipy.stats.bootstrap
  (``bench_bootstrap.py``; skipped without scipy).

Figures are CPU time (user + sys) where the benchmark measures a process or a function,
wall time for the runner (waiting on the server is the point there).  The last line is one
JSON object: every row, and each benchmark's own last line.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Row:
    work: str
    evalkit: str
    peer: str
    ratio: str
    target: str
    met: bool | None  # None: no target on this row, or the row did not run
    load: float | None


def _run(script: str, args: Sequence[str]) -> tuple[dict[str, Any] | list[Any] | None, str]:
    """The JSON object ``script`` prints last, or ``None`` and why it has none."""
    done = subprocess.run(
        [sys.executable, str(HERE / script), *args], capture_output=True, text=True, check=False
    )
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    if done.returncode not in (0, 1) or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"{script} exited {done.returncode}: {tail}"
    try:
        parsed: dict[str, Any] | list[Any] = json.loads(lines[-1])
    except json.JSONDecodeError:
        return None, f"{script}: its last line is not JSON: {lines[-1][:120]}"
    return parsed, ""


def _skipped(work: str, why: str) -> Row:
    return Row(work, "—", "—", "—", why, None, None)


def _short(case: str) -> str:
    # "real pair RUN / QRELS, 100,000 run lines" -> "real pair RUN"
    return case.split(" / ")[0] if case.startswith("real pair") else case


def trec_rows(args: argparse.Namespace) -> tuple[list[Row], Any]:
    if not args.trec_eval:
        return [_skipped("TREC scoring", "skipped: pass --trec-eval (or set $TREC_EVAL)")], None
    extra = ["--trec-eval", args.trec_eval, "--repeat", str(args.repeat)]
    extra += ["--sizes", *(["10000", "100000"] if args.quick else ["10000", "100000", "1000000"])]
    if args.real_run and args.real_qrels:
        extra += ["--real-run", str(args.real_run), "--real-qrels", str(args.real_qrels)]
    data, why = _run("bench_trec.py", extra)
    if not isinstance(data, dict):
        return [_skipped("TREC scoring", why)], None
    rows = []
    for case in data["results"]:
        peer = case["trec_eval (C)"]["cpu_s"]
        # #27 holds the real pair and a 10^6-line run to the ratios; smaller synthetic
        # runs show the fixed start-up cost, with no target of their own.
        held = case["case"].startswith("real pair") or case["lines"] >= 1_000_000
        for name, limit in (("evalkit library", 1.5), ("evalkit CLI", 2.0)):
            ours = case[name]["cpu_s"]
            ratio = ours / peer
            rows.append(
                Row(
                    f"TREC {name.split()[1]}: {_short(case['case'])}",
                    f"{ours:.3f} s",
                    f"trec_eval {peer:.3f} s",
                    f"{ratio:.2f}x",
                    f"<= {limit}x" if held else "—",
                    ratio <= limit if held else None,
                    case["load_avg_1m"],
                )
            )
        other = case.get("pytrec_eval")
        if isinstance(other, dict) and other.get("cpu_s"):
            ours = case["evalkit library"]["cpu_s"]
            rows.append(
                Row(
                    f"TREC library vs pytrec_eval: {_short(case['case'])}",
                    f"{ours:.3f} s",
                    f"pytrec_eval {other['cpu_s']:.3f} s",
                    f"{ours / other['cpu_s']:.2f}x",
                    "—",
                    None,
                    case["load_avg_1m"],
                )
            )
    return rows, data


def startup_rows(args: argparse.Namespace) -> tuple[list[Row], Any]:
    data, why = _run("bench_startup.py", ["--rounds", str(args.rounds)])
    if not isinstance(data, dict):
        return [_skipped("start-up", why)], None
    typer = data["python -c 'import typer'"]
    rows = []
    for command in ("evalkit --help", "evalkit --version"):
        ours = data[command]
        rows.append(
            Row(
                f"`{command}` (wall)",
                f"{ours['wall_s']:.3f} s",
                f"import typer {typer['wall_s']:.3f} s",
                f"{ours['wall_s'] / typer['wall_s']:.2f}x",
                "< 0.15 s wall",
                ours["wall_s"] < 0.15,
                data["load"][0],
            )
        )
    return rows, data


def artifact_rows(args: argparse.Namespace) -> tuple[list[Row], Any]:
    rows, raw = [], {}
    for verb, script in (("read", "bench_artifact_read.py"), ("write", "bench_artifact_write.py")):
        data, why = _run(script, ["--cases", str(args.cases)])
        if not isinstance(data, dict):
            rows.append(_skipped(f"artefact {verb}", why))
            continue
        raw[verb] = data
        rows.append(
            Row(
                f"artefact {verb}, {data['cases']:,} cases",
                f"{data['evalkit_cpu_s']:.3f} s",
                f"{data['baseline']} {data['baseline_cpu_s']:.3f} s",
                f"1/{data['cpu_speedup']:.1f}",
                ">= 5x faster",
                data["cpu_speedup"] >= 5.0,
                data["load_avg_1m_before"],
            )
        )
    return rows, raw


def gate_rows(args: argparse.Namespace) -> tuple[list[Row], Any]:
    sizes = ["1000", "10000"] if args.quick else ["1000", "10000", "100000"]
    data, why = _run("bench_gate.py", ["--cases", *sizes])
    if not isinstance(data, list):
        return [_skipped("gate", why)], None
    rows = []
    for size in data:
        naive = size.get("naive_tests_s")
        at_target = size["n_cases"] == 100_000
        rows.append(
            Row(
                f"gate, {size['n_cases']:,} cases, {size['n_checks']} checks",
                f"{size['cpu_s']:.2f} s",
                f"naive tests {naive:.2f} s" if naive is not None else "—",
                f"{size['cpu_s'] / naive:.2f}x" if naive else "—",
                "< 30 s" if at_target else "—",
                size["cpu_s"] < 30.0 if at_target else None,
                size["load_avg_1m"],
            )
        )
    return rows, data


def runner_rows(args: argparse.Namespace) -> tuple[list[Row], Any]:
    data, why = _run("bench_runner.py", ["--quick"] if args.quick else [])
    if not isinstance(data, dict):
        return [_skipped("runner", why)], None
    nginx = data["servers"]["nginx"]
    if not nginx["available"]:
        return [_skipped("runner against nginx", nginx["detail"])], data
    rows = [
        Row(
            f"runner vs nginx, c = {row['concurrency']} (wall)",
            f"{row['wall_s']:.3f} s",
            f"ideal {row['ideal_s']:.3f} s",
            f"{row['ratio']:.2f}x",
            "—",  # measured, not a target (#45)
            None,
            data["loadavg_before"][0],
        )
        for row in nginx["results"]
        if row["concurrency"] >= 32
    ]
    return rows, data


def bootstrap_rows(_args: argparse.Namespace) -> tuple[list[Row], Any]:
    common = ["--sizes", "100000", "--metrics", "1", "--kind", "continuous"]
    ours, why = _run("bench_bootstrap.py", [*common, "--only", "evalkit"])
    peer, why_peer = _run("bench_bootstrap.py", [*common, "--only", "scipy"])
    if not isinstance(ours, dict):
        return [_skipped("paired bootstrap", why)], None
    mine = ours["results"][0]
    theirs = peer["results"][0] if isinstance(peer, dict) and peer["results"] else None
    if theirs is None or theirs.get("wall_s") is None:
        peer_text, ratio = f"scipy: {why_peer or 'not run'}", "—"
    else:
        peer_text = f"scipy {theirs['wall_s']:.2f} s, {theirs['peak_mb']:.0f} MB"
        ratio = f"{mine['wall_s'] / theirs['wall_s']:.2f}x"
    return [
        Row(
            "paired bootstrap, n = 10^5, B = 10^4 (wall, compute only)",
            f"{mine['wall_s']:.2f} s, {mine['peak_mb']:.0f} MB",
            peer_text,
            ratio,
            "—",
            None,
            os.getloadavg()[0],
        )
    ], {"evalkit": ours, "scipy": peer}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--trec-eval", default=os.environ.get("TREC_EVAL"))
    parser.add_argument("--real-run", type=Path)
    parser.add_argument("--real-qrels", type=Path)
    parser.add_argument("--repeat", type=int, default=5, help="TREC: alternating runs each")
    parser.add_argument("--rounds", type=int, default=15, help="start-up: rounds")
    parser.add_argument("--cases", type=int, default=100_000, help="artefact: cases")
    parser.add_argument("--quick", action="store_true", help="smaller sizes (no 10^5 gate)")
    args = parser.parse_args(argv)
    rows: list[Row] = []
    raw: dict[str, Any] = {}
    for name, build in (
        ("trec", trec_rows),
        ("startup", startup_rows),
        ("artifact", artifact_rows),
        ("gate", gate_rows),
        ("runner", runner_rows),
        ("bootstrap", bootstrap_rows),
    ):
        print(f"running {name} ... (load average {os.getloadavg()[0]:.2f})", flush=True)
        got, raw[name] = build(args)
        rows.extend(got)
    print()
    widths = (58, 18, 30, 8, 16, 6, 5)
    head = ("work", "evalkit", "peer (same run)", "ratio", "target", "met", "load")
    print("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)))
    print("-" * (sum(widths) + 2 * (len(widths) - 1)))
    for r in rows:
        met = "—" if r.met is None else ("yes" if r.met else "NO")
        load = "—" if r.load is None else f"{r.load:.2f}"
        cells = (r.work, r.evalkit, r.peer, r.ratio, r.target, met, load)
        print("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)))
    print(json.dumps({"rows": [asdict(r) for r in rows], "benchmarks": raw}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
