"""Was the client itself the bottleneck?  The saturation check ``evaluate`` runs after a run.

Every case costs this process some CPU (sending, parsing, scoring, judging).
Python runs that work on one core at a time, so when a run keeps the process
busy for most of its wall time, cases queue for the client rather than for the
target: the run is slower than the target allows, and the measured latencies,
which are client-observed (``HttpTarget`` times each case on its own clock, from
before the first send to the last byte read), include that queueing.
The run then says so and names a concurrency that keeps the client at most
half busy, where it measures the target rather than itself.

The rule (pure, so tests inject the measurements):

* busy = client CPU seconds / wall seconds of the run; saturated when
  busy >= :data:`SATURATED_BUSY` and the run was concurrent and long enough to
  tell (more cases than slots, at least :data:`MIN_WALL_S` of wall time);
* honest concurrency = floor(:data:`HONEST_BUSY` x L / cpu per case), with L
  the lower decile of the measured latencies (the least inflated by queueing):
  by Little's law c cases in flight of latency L cost c x cpu / L of a core.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from evalkit.errors import EvalkitWarning

__all__ = [
    "HONEST_BUSY",
    "MIN_WALL_S",
    "SATURATED_BUSY",
    "ClientLoad",
    "ClientSaturationWarning",
    "honest_concurrency",
    "saturation_warning",
]

SATURATED_BUSY: Final = 0.8
"""Share of one core, over the run, from which the client counts as saturated."""
HONEST_BUSY: Final = 0.5
"""Share of one core the suggested concurrency would keep the client at."""
MIN_WALL_S: Final = 0.25
"""Shorter runs are not judged: CPU accounting is too coarse to tell."""


class ClientSaturationWarning(EvalkitWarning):
    """The run's pace (and perhaps its latencies) were set by this process's CPU."""


@dataclass(frozen=True)
class ClientLoad:
    """What a finished run measured about its own client."""

    cases: int  # cases that ran in this process
    concurrency: int
    wall_s: float
    cpu_s: float  # this process's CPU time over the run (every thread)
    latencies_ms: Sequence[float]  # of the cases that got a response

    @property
    def busy(self) -> float:
        return self.cpu_s / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def cpu_ms_per_case(self) -> float:
        return self.cpu_s * 1000.0 / self.cases if self.cases else 0.0


def _lower_decile(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.1 * len(ordered)) - 1)]


def honest_concurrency(load: ClientLoad) -> int | None:
    """The largest concurrency keeping the client at most :data:`HONEST_BUSY` busy."""
    latencies = [v for v in load.latencies_ms if v > 0 and math.isfinite(v)]
    if not latencies or load.cpu_ms_per_case <= 0:
        return None
    return max(1, math.floor(HONEST_BUSY * _lower_decile(latencies) / load.cpu_ms_per_case))


def saturation_warning(load: ClientLoad) -> str | None:
    """The warning for a run whose client was saturated, or ``None``."""
    if load.concurrency < 2 or load.cases <= load.concurrency or load.wall_s < MIN_WALL_S:
        return None
    if load.busy < SATURATED_BUSY:
        return None
    honest = honest_concurrency(load)
    if honest is None or honest >= load.concurrency:
        return None
    return (
        f"the client's own CPU limited this run at concurrency {load.concurrency}: "
        f"this process was busy {load.busy:.0%} of the wall time "
        f"({load.cpu_ms_per_case:.2f} ms of CPU per case), so cases queued for the client, "
        "not only for the target: the run took longer than the target needed, and "
        "the latencies, timed by the client's own clock, include that wait; "
        f"concurrency {honest} or less would measure the target honestly "
        "(or give the client more CPU)"
    )
