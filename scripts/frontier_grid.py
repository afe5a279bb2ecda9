"""Whether any setting of ``auto``'s four constants holds the n = 15 cells together: measured.

    uv run python scripts/frontier_grid.py [--trials 20000]

Two of the calibration's targets pull ``auto``'s constants in opposite directions at
n = 15: the false fails of a skewed parent (Exp(1) − 1, at most 4%), which want more
correction, and the coverage of a bounded skewed one (±(Beta(½, 3) − 1/7), 95 ± 1.5),
whose skew-t interval is already conservative on both sides.  This runs every
combination of the small-sample factor on the skewness (:data:`SKEW_BIAS`), the
stability threshold (:data:`AUTO_MIN_TRIMMED_SKEW`), the deep trim's minimum
(:data:`AUTO_DEEP_TRIM_MIN`) and its threshold (:data:`AUTO_MIN_DEEP_TRIMMED_SKEW`)
over the binding cells, plus the ones a change shows first elsewhere (correlated nDCG,
the held-out contaminated normal and log-normal) and the power against plain t, and
prints one line per combination, sorted by the bounded shape's coverage.  The library
reads the constants at call time (``stability_sweep.library_constants``); nothing is
changed on disk.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import evalkit.stats.procedures as procedures
from evalkit.stats.calibrate import SHAPES, Shape, measure, power_against_t, seed_for

sys.path.insert(0, str(Path(__file__).resolve().parent))
from heldout_null import SHAPES as HELD_OUT
from stability_sweep import library_constants

GRID = {
    "SKEW_BIAS": (1.5, 1.75, 2.0, 2.25),
    "AUTO_MIN_TRIMMED_SKEW": (0.05, 0.1, 0.15),
    "AUTO_DEEP_TRIM_MIN": (4, 5),
    "AUTO_MIN_DEEP_TRIMMED_SKEW": (0.1, 0.2),
}
#: (label, shape, n, what is read): coverage, the higher-is-better rate, or the larger side.
CELLS: tuple[tuple[str, Shape, int, str], ...] = (
    ("bounded@15 cov", SHAPES["bounded-right"], 15, "coverage"),
    ("bounded@30 cov", SHAPES["bounded-right"], 30, "coverage"),
    ("exp@15", SHAPES["right-skewed"], 15, "higher"),
    ("exp@30 cov", SHAPES["right-skewed"], 30, "coverage"),
    ("ndcg@15", SHAPES["ndcg-shared"], 15, "worse side"),
    ("contam@30", HELD_OUT["contaminated"], 30, "worse side"),
    ("lognorm@30", HELD_OUT["lognormal"], 30, "higher"),
)
POWER = (("pw t2@15", SHAPES["heavy-t2"], 15), ("pw cont@15", SHAPES["continuous"], 15))


def cell(shape: Shape, n: int, read: str, trials: int, label: str) -> float:
    rates = measure("auto", shape, n, trials, seed_for("frontier", label, n))
    below, above = 100 * rates.below / trials, 100 * rates.above / trials
    if read == "coverage":
        return 100 - below - above
    return below if read == "higher" else max(below, above)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--trials", type=int, default=20_000)
    trials: int = parser.parse_args().trials
    library = {name: getattr(procedures, name) for name in GRID}
    rows: list[tuple[float, str]] = []
    for values in itertools.product(*GRID.values()):
        setting = dict(zip(GRID, values, strict=True))
        with library_constants(**setting):
            read = [cell(shape, n, how, trials, label) for label, shape, n, how in CELLS]
            for label, shape, n in POWER:
                hits = power_against_t(shape, n, trials, seed_for("frontier-power", label, n))
                read.append(100 * (hits["auto"] - hits["t"]))
        chosen = " *" if setting == library else ""
        line = "  ".join(f"{v:g}" for v in values).ljust(22)
        rows.append((read[0], line + "".join(f"{r:12.2f}" for r in read) + chosen))
    labels = [label for label, *_ in CELLS] + [label for label, *_ in POWER]
    print(f"{trials:,} trials a cell; * marks the library's setting")
    print(f"{'b  thr  min  deep':22s}" + "".join(f"{label:>12s}" for label in labels))
    for _, line in sorted(rows):
        print(line)


if __name__ == "__main__":
    main()
