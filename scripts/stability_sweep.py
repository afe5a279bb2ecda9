"""What the stability threshold of ``auto`` trades at small n: measured.

    uv run python scripts/stability_sweep.py [--thresholds 0.15 0.1 0.05] [--trials 100000]

``auto`` corrects for skewness only where the sample skewness keeps its sign and at
least :data:`~evalkit.stats.procedures.AUTO_MIN_TRIMMED_SKEW` of size once the few most
extreme cases on its side are set aside.  Where it corrects without the deep skew, plain
t guards the corrected interval, so a symmetric parent cannot fail falsely more often
than under plain t whatever the threshold; what a lower threshold buys is more of a
skewed parent's samples corrected (fewer of plain t's false fails there), and what it
costs is power where plain t holds (the union is wider than t's interval).  This prints
both for each threshold: one-sided false fails (higher- / lower-is-better, coverage) on
the skewed shapes at n = 10-30 and the power of ``auto`` against plain t at t's MDE on
the symmetric ones (the calibration's own measures,
:func:`~evalkit.stats.calibrate.measure` and :func:`~evalkit.stats.calibrate.power_against_t`,
with their own seeds).  The library reads the threshold at call time, so the sweep
sets it for each column (:func:`library_constants`); nothing is changed on disk.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import evalkit.stats.procedures as procedures
from evalkit.stats.calibrate import measure, power_against_t, seed_for

sys.path.insert(0, str(Path(__file__).resolve().parent))
from guard_sweep import shape_of

#: Where more correction shows: the suite's skewed shapes and the held-out skewed ones.
FALSE_FAIL_CELLS = (
    ("right-skewed", (10, 15, 20, 30)),
    ("left-skewed", (15, 30)),
    ("bounded-right", (15, 20, 30)),
    ("held-out lognormal", (15, 30)),
    ("held-out skew-mix", (15, 30)),
    ("held-out chi2(1)", (15, 30)),
    ("held-out contaminated", (15, 30)),
    ("heavy-t2", (15, 30)),
    ("ndcg-shared", (15, 30)),
)
#: Where plain t holds its level and the power target (at most 3 points below t) applies.
POWER_CELLS = (
    ("continuous", (15, 30)),
    ("heavy-t2", (15, 30)),
    ("heavy-t3", (15, 30)),
    ("ndcg-shared", (15, 30)),
    ("precision@5", (15, 30)),
    ("trec-ndcg@10", (15, 30)),
    ("trec-recall@100", (15, 30)),
)


@contextmanager
def library_constants(**values: float) -> Iterator[None]:
    """The library's module constants of :mod:`evalkit.stats.procedures` set to ``values``
    for the block (they are read at call time), and put back after it."""
    saved = {name: getattr(procedures, name) for name in values}
    for name, value in values.items():
        setattr(procedures, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(procedures, name, value)


def sweep(
    cells: tuple[tuple[str, tuple[int, ...]], ...],
    thresholds: list[float],
    cell: Callable[[str, int], str],
    constant: str = "AUTO_MIN_TRIMMED_SKEW",
) -> None:
    """One line per (shape, n): ``cell`` at each value of ``constant``, set in the
    library first."""
    for name, sizes in cells:
        for n in sizes:
            row = []
            for threshold in thresholds:
                with library_constants(**{constant: threshold}):
                    row.append(f"{cell(name, n):>21s}")
            print(f"{name:22s}{n:4d}  " + "  ".join(row), flush=True)


def cell_readers(
    trials: int, tag: str
) -> tuple[Callable[[str, int], str], Callable[[str, int], str]]:
    """The two cells a sweep prints, seeded by ``tag``: ``auto``'s one-sided false fails
    (higher- / lower-is-better, coverage) and its power against plain t at t's MDE."""

    def false_fails(name: str, n: int) -> str:
        rates = measure("auto", shape_of(name), n, trials, seed_for(tag, name, n))
        low, high = 100 * rates.below / trials, 100 * rates.above / trials
        return f"{low:5.2f} / {high:5.2f} ({100 - low - high:5.2f})"

    def power(name: str, n: int) -> str:
        hits = power_against_t(shape_of(name), n, trials, seed_for(tag + "p", name, n))
        return f"{100 * (hits['auto'] - hits['t']):+5.2f} (t {100 * hits['t']:4.1f})"

    return false_fails, power


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--thresholds", type=float, nargs="+", default=[0.15, 0.1, 0.05])
    parser.add_argument("--trials", type=int, default=100_000)
    args = parser.parse_args()
    trials: int = args.trials
    chosen = procedures.AUTO_MIN_TRIMMED_SKEW
    heads = "  ".join(f"{'at ' + format(t, 'g'):>21s}" for t in args.thresholds)

    false_fails, power = cell_readers(trials, "stab")
    print(f"{trials:,} trials a cell; the library's threshold: {chosen:g}")
    print(f"\nfalse fails, higher- / lower-is-better % (coverage %)\n{'':26s}{heads}")
    sweep(FALSE_FAIL_CELLS, args.thresholds, false_fails)
    print(f"\npower at t's MDE, auto minus t (points)\n{'':26s}{heads}")
    sweep(POWER_CELLS, args.thresholds, power)


if __name__ == "__main__":
    main()
