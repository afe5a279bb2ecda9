"""The statistics engine behind :mod:`evalkit.stats.significance` (pure numpy, no I/O).

One module per job:

* :mod:`~evalkit.stats.stream` -- the versioned resampling stream (seeds, draws, chunks)
* :mod:`~evalkit.stats.fixedpoint` -- exact integer sums, hence bit-for-bit results
* :mod:`~evalkit.stats.bootstrap` -- the shared, memory-bounded bootstrap pass
* :mod:`~evalkit.stats.permutation` -- the sign-flip null (exact, binomial, Monte Carlo)
* :mod:`~evalkit.stats.aggregates` -- whole-run aggregates recomputed per resample
* :mod:`~evalkit.stats.tails` -- tail counts into p-values (+1 rule, mid-p)
* :mod:`~evalkit.stats.tdist` -- Student's t tails without scipy
* :mod:`~evalkit.stats.correction` -- Holm, Westfall-Young max-T, false-alarm chance
* :mod:`~evalkit.stats.fdr` -- Benjamini-Hochberg / Benjamini-Yekutieli (per-slice checks)
* :mod:`~evalkit.stats.diagnostics` -- small-sample and skewness warnings
* :mod:`~evalkit.stats.pairing` -- runs paired by case id, with every fail-loud rule
* :mod:`~evalkit.stats.ties` -- wins, losses and ties (one polarity-aware definition)
* :mod:`~evalkit.stats.names` -- the method and correction names, declared once
* :mod:`~evalkit.stats.compare` -- one comparison end to end
* :mod:`~evalkit.stats.outcome` -- the frozen result values
* :mod:`~evalkit.stats.power` -- power, minimum detectable effect, cases needed
* :mod:`~evalkit.stats.procedures` -- the procedures a verdict is decided by (paired t default)
* :mod:`~evalkit.stats.paired_test` -- the gate's verdict as a library call
"""

from __future__ import annotations

from typing import Any

__all__ = ["RESAMPLING_STREAM"]


def __getattr__(name: str) -> Any:
    # lazy, so importing evalkit.stats.names (checks, gate) does not load numpy
    if name == "RESAMPLING_STREAM":
        from evalkit.stats.stream import RESAMPLING_STREAM

        return RESAMPLING_STREAM
    raise AttributeError(name)
