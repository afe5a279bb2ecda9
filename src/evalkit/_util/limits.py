"""Bounds on numbers a typo could make absurd, shared by evalkit.yaml and the CLI flags.

Importing this module costs nothing (the CLI reads it to build ``--help``).
"""

from __future__ import annotations

# 10^6 resamples put the Monte Carlo error of a p-value near 0.0005; 10^11 would ask for
# 745 GiB of resampling indices.
MAX_RESAMPLES = 1_000_000
# Every unit of concurrency is a worker thread.
MAX_CONCURRENCY = 1_024
# `evalkit power` simulates (cases x evals) resampled differences at once.
MAX_SIMULATED_CASES = 50_000_000
# The largest artefact accepted from a store (compressed or not): far above any real
# eval, far below what would hurt the runner.
MAX_ARTEFACT_BYTES = 200 * 1024 * 1024
