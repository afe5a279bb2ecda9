"""Score TREC run files, whole processes: evalkit (library and CLI) against trec_eval's C.

    uv run python benchmarks/bench_trec.py --trec-eval /path/to/trec_eval
    uv run python benchmarks/bench_trec.py --sizes 10000 100000 --repeat 5
    uv run python benchmarks/bench_trec.py --sizes 1e7 --repeat 1 --data /tmp/trec-data \
        --only "evalkit library"
    uv run python benchmarks/bench_trec.py --trec-eval PATH --real-run RUN --real-qrels QRELS

``--real-run``/``--real-qrels`` time a real pair too, as given (plain or ``.gz``): the TREC
2003 Robust run ``input.fub03IeOLKe3`` (100,000 lines) and its qrels (128,796 judgments),
e.g. from https://github.com/joaopalotti/trectools (examples/robust03/); skipped, with a
message, when the files are not there.  Nothing here is fetched.

trec_eval is not on PyPI or in Debian: build it from https://github.com/usnistgov/trec_eval
(``make``; 10.0, the version evalkit's reader follows) and pass the binary with
``--trec-eval`` or ``$TREC_EVAL``, or put it on PATH.  pytrec_eval (trec_eval 9.0.8's C
inside a Python extension) is timed too when installed.

For each size it writes a seeded run shaped like TREC 2003 Robust (``--sizes`` run lines:
100 queries of 100 or 1,000 documents, then 1,000 queries of 1,000, scores with 6
decimals) and qrels of 1,288 judgments per query (a third of them retrieved, grades
0-2), then times, alternating, ``--repeat`` times each:

* ``trec_eval -q -m map -m ndcg_cut.10 -m P.10 -m recip_rank -m recall.1000``;
* ``python -c 'score_trec_run(...)'`` (the library, imports included) with the same
  five measures (``map@1000, ndcg@10, precision@10, mrr@1000, recall@1000``);
* ``evalkit run --trec-run RUN --qrels QRELS --metrics ... --out run.json``;
* ``python -c 'pytrec_eval ...'`` (parse both files, evaluate the same five).

Every figure is the median CPU time (user + sys) of the child processes, with the median
wall time beside it, the child's peak resident set (the largest of the repeats, from
``os.wait4``) and the load average of the moment (on a shared machine wall time mostly
measures the neighbours).  Ratios are against trec_eval, or without it against
pytrec_eval (the same C, with its files parsed into Python dicts first).  The children
run with bytecode caching on, after one warm-up, as an installed evalkit runs.  evalkit's
per-query values are compared with trec_eval's ``-q`` output (4 decimals, all it prints).
The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

METRICS = ("map@1000", "ndcg@10", "precision@10", "mrr@1000", "recall@1000")
TREC_NAMES = {
    "map": "map@1000",
    "ndcg_cut_10": "ndcg@10",
    "P_10": "precision@10",
    "recip_rank": "mrr@1000",
    "recall_1000": "recall@1000",
}
JUDGED_PER_QUERY = 1288


def generate(folder: Path, lines: int, seed: int = 7) -> tuple[Path, Path]:
    """A Robust03-shaped run of ``lines`` lines and its qrels."""
    depth = 100 if lines <= 10_000 else 1000
    queries = max(1, lines // depth)
    rng = np.random.default_rng(seed)
    run, qrels = folder / f"run{lines}.txt", folder / f"qrels{lines}.txt"
    with run.open("w") as run_fh, qrels.open("w") as qrels_fh:
        for q in range(queries):
            qid = str(301 + q)
            docs = rng.choice(500_000, size=depth + JUDGED_PER_QUERY, replace=False)
            ranked = docs[:depth].tolist()
            scores = np.sort(rng.random(depth) * 10)[::-1].tolist()
            run_fh.write(
                "".join(
                    f"{qid} Q0 FBIS{d:07d} {r} {s:.6f} bench\n"
                    for r, (d, s) in enumerate(zip(ranked, scores, strict=True))
                )
            )
            hit = min(depth, JUDGED_PER_QUERY // 3)
            judged = rng.choice(ranked, size=hit, replace=False).tolist()
            judged += docs[depth : depth + JUDGED_PER_QUERY - hit].tolist()
            grades = rng.choice([0, 0, 0, 1, 2], size=len(judged)).tolist()
            qrels_fh.write(
                "".join(
                    f"{qid} 0 FBIS{d:07d} {g}\n"
                    for d, g in sorted(zip(judged, grades, strict=True))
                )
            )
    return run, qrels


def reused(folder: Path | None, lines: int) -> tuple[Path, Path] | None:
    """The files :func:`generate` left in ``folder`` for ``lines``, if it did."""
    if folder is None:
        return None
    run, qrels = folder / f"run{lines}.txt", folder / f"qrels{lines}.txt"
    return (run, qrels) if run.is_file() and qrels.is_file() else None


def timed(command: list[str]) -> tuple[float, float, str, float]:
    """Run ``command``; its CPU seconds (user + sys), wall seconds, stdout and peak RSS (MiB).

    The child is reaped with ``os.wait4``, whose usage is that child's alone (its peak
    resident set included), not the maximum over every child so far."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        child = subprocess.Popen(command, stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if child.returncode != 0:
        raise SystemExit(f"{command[0]} failed ({child.returncode}): {stderr.strip()[-400:]}")
    return usage.ru_utime + usage.ru_stime, wall, stdout, usage.ru_maxrss / 1024


def trec_eval_values(text: str) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for line in text.splitlines():
        name, qid, value = line.split()
        if qid != "all" and name in TREC_NAMES:
            out.setdefault(qid, {})[TREC_NAMES[name]] = float(value)
    return out


def commands(
    run: Path, qrels: Path, folder: Path, trec_eval: str | None, pytrec: bool
) -> dict[str, list[str]]:
    py = sys.executable
    evalkit_bin = str(Path(sys.executable).with_name("evalkit"))
    listed = ",".join(METRICS)
    out = {}
    if trec_eval:
        measures = ["-m", "map", "-m", "ndcg_cut.10", "-m", "P.10", "-m", "recip_rank"]
        out["trec_eval (C)"] = [
            trec_eval,
            "-q",
            *measures,
            "-m",
            "recall.1000",
            str(qrels),
            str(run),
        ]
    out["evalkit library"] = [
        py,
        "-c",
        "import json, sys\n"
        "from evalkit.trec import score_trec_run\n"
        f"r = score_trec_run({str(run)!r}, {str(qrels)!r}, {list(METRICS)!r})\n"
        "if len(sys.argv) > 1: print(json.dumps({q.query_id: q.metrics for q in r.per_query}))",
    ]
    out["evalkit CLI"] = [
        evalkit_bin,
        "run",
        "--trec-run",
        str(run),
        "--qrels",
        str(qrels),
        "--metrics",
        listed,
        "--out",
        str(folder / "run.json"),
    ]
    if pytrec:
        out["pytrec_eval"] = [
            py,
            "-c",
            "import pytrec_eval\n"
            f"q = pytrec_eval.parse_qrel(open({str(qrels)!r}))\n"
            f"r = pytrec_eval.parse_run(open({str(run)!r}))\n"
            "pytrec_eval.RelevanceEvaluator(q, {'map', 'ndcg_cut_10', 'P_10', 'recip_rank', "
            "'recall_1000'}).evaluate(r)",
        ]
    return out


def real_pair(
    run: Path | None, qrels: Path | None, folder: Path
) -> tuple[str, int, Path, Path] | None:
    """The real run and qrels given, if both are there; else say why they are skipped.

    A ``.gz`` file is decompressed into ``folder`` first: trec_eval reads plain text only.
    """
    if run is None and qrels is None:
        return None
    missing = [
        f"{flag} {path}"
        for flag, path in (("--real-run", run), ("--real-qrels", qrels))
        if path is None or not path.is_file()
    ]
    if missing or run is None or qrels is None:
        print(f"real pair skipped: not found: {', '.join(missing)}")
        return None
    title = f"real pair {run.name} / {qrels.name}"
    plain = []
    for given in (run, qrels):
        path = given
        if given.name.endswith(".gz"):
            path = folder / given.name.removesuffix(".gz")
            path.write_bytes(gzip.decompress(given.read_bytes()))
        plain.append(path)
    lines = plain[0].read_bytes().count(b"\n")
    return f"{title}, {lines:,} run lines", lines, plain[0], plain[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", type=_sizes, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--trec-eval", default=os.environ.get("TREC_EVAL"))
    parser.add_argument(
        "--data",
        type=Path,
        help="keep the generated files here, and reuse them when already there",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        help="time only these tools (e.g. 'evalkit library' pytrec_eval): 10^7 lines takes long",
    )
    parser.add_argument("--real-run", type=Path, help="a real run file, timed after the sizes")
    parser.add_argument("--real-qrels", type=Path, help="its qrels")
    args = parser.parse_args()
    trec_eval = args.trec_eval or shutil.which("trec_eval")
    if trec_eval is None:
        print("trec_eval not found (--trec-eval, $TREC_EVAL or PATH): pytrec_eval is the peer")
    try:
        import pytrec_eval  # noqa: F401
    except ImportError:
        pytrec = False
    else:
        pytrec = True
    # The peer: trec_eval's C, else pytrec_eval (trec_eval's C inside Python).
    peer = "trec_eval (C)" if trec_eval else "pytrec_eval" if pytrec else None
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode cached
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cases: list[tuple[str, int, Path, Path]] = []
        for lines in args.sizes:
            run, qrels = reused(args.data, lines) or generate(args.data or folder, lines)
            queries = lines // (100 if lines <= 10_000 else 1000)
            cases.append((f"{lines:,} run lines, {queries:,} queries", lines, run, qrels))
        real = real_pair(args.real_run, args.real_qrels, folder)
        if real is not None:
            cases.append(real)
        for title, lines, run, qrels in cases:
            todo = commands(run, qrels, folder, trec_eval, pytrec)
            if args.only:
                todo = {name: todo[name] for name in todo if name in args.only or name == peer}
            for command in todo.values():  # warm-up: bytecode, page cache
                timed(command)
            if trec_eval:
                ours = json.loads(timed([*todo["evalkit library"], "values"])[2])
                theirs = trec_eval_values(timed(todo["trec_eval (C)"])[2])
                worst = max(
                    abs(ours[q][m] - v) for q, row in theirs.items() for m, v in row.items()
                )
                if set(ours) != set(theirs) or worst > 5e-5 + 1e-9:
                    raise SystemExit(f"evalkit and trec_eval disagree (max |diff| {worst:.2g})")
            cpu: dict[str, list[float]] = {name: [] for name in todo}
            wall: dict[str, list[float]] = {name: [] for name in todo}
            rss: dict[str, list[float]] = {name: [] for name in todo}
            loads = []
            for _ in range(args.repeat):
                for name, command in todo.items():
                    c, w, _, m = timed(command)
                    cpu[name].append(c)
                    wall[name].append(w)
                    rss[name].append(m)
                loads.append(os.getloadavg()[0])
            base = statistics.median(cpu[peer]) if peer else None
            base_rss = max(rss[peer]) if peer else None
            print(f"{title}, median of {args.repeat}, load average {statistics.median(loads):.2f}")
            row: dict[str, object] = {
                "case": title,
                "lines": lines,
                "load_avg_1m": statistics.median(loads),
            }
            base_wall = statistics.median(wall[peer]) if peer else None
            for name in todo:
                c, w = statistics.median(cpu[name]), statistics.median(wall[name])
                m = max(rss[name])  # the worst of the repeats: a peak is a peak
                ratio = (
                    f"{c / base:5.2f}x CPU / {w / base_wall:5.2f}x wall / "
                    f"{m / base_rss:5.2f}x peak RSS of {peer}"
                    if base and base_wall and base_rss
                    else ""
                )
                print(f"  {name:<18} {c:7.3f} s CPU {w:7.3f} s wall {m:8.0f} MiB peak  {ratio}")
                row[name] = {"cpu_s": round(c, 3), "wall_s": round(w, 3), "peak_rss_mib": round(m)}
            if trec_eval:
                print(
                    f"  per-query values equal trec_eval's to its 4 printed decimals ({worst:.1g})"
                )
            results.append(row)
    print(json.dumps({"trec_eval": trec_eval, "results": results}))


def _sizes(text: str) -> int:
    return int(float(text))  # 1e7 as well as 10000000


if __name__ == "__main__":
    main()
