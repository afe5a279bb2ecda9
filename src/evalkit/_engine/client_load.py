"""Was the client itself the bottleneck?  The saturation check ``evaluate`` runs after a run."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from evalkit.errors import EvalkitWarning

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
    cpu_wait_s: float = 0.0  # its case threads' time ready to run but waiting for a CPU

    @property
    def busy(self) -> float:
        return (self.cpu_s + self.cpu_wait_s) / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def cpu_ms_per_case(self) -> float:
        return self.cpu_s * 1000.0 / self.cases if self.cases else 0.0

    @property
    def wait_ms_per_case(self) -> float:
        return self.cpu_wait_s * 1000.0 / self.cases if self.cases else 0.0


class ThreadWait:
    """The calling thread's seconds spent waiting for a CPU, read cheaply and often."""

    def __init__(self) -> None:
        self._last = 0.0
        try:
            self._fd: int | None = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
        except OSError:
            self._fd = None
        self._last = self._read()

    def _read(self) -> float:
        if self._fd is None:
            return 0.0
        try:  # "<ns on a CPU> <ns waiting for one> <timeslices>"
            return int(os.pread(self._fd, 64, 0).split()[1]) / 1e9
        except (OSError, ValueError, IndexError):
            return self._last

    def since_last(self) -> float:
        """Seconds waited since the previous call (or since this was created)."""
        now = self._read()
        spent, self._last = max(0.0, now - self._last), now
        return spent

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def honest_concurrency(load: ClientLoad) -> int | None:
    """The largest concurrency keeping the client at most :data:`HONEST_BUSY` busy."""
    latencies = sorted(v for v in load.latencies_ms if v > 0 and math.isfinite(v))
    demand_ms = load.cpu_ms_per_case + load.wait_ms_per_case
    if not latencies or demand_ms <= 0:
        return None
    lower_decile = latencies[max(0, math.ceil(0.1 * len(latencies)) - 1)]
    return max(1, math.floor(HONEST_BUSY * lower_decile / demand_ms))


def saturation_warning(load: ClientLoad) -> str | None:
    """The warning for a run whose client was saturated, or ``None``."""
    if load.concurrency < 2 or load.cases <= load.concurrency or load.wall_s < MIN_WALL_S:
        return None
    if load.busy < SATURATED_BUSY:
        return None
    honest = honest_concurrency(load)
    if honest is None or honest >= load.concurrency:
        return None
    who = "the client's own CPU"
    if load.cpu_wait_s < 0.1 * load.cpu_s:
        share = (
            f"this process was busy {load.busy:.0%} of the wall time "
            f"({load.cpu_ms_per_case:.2f} ms of CPU per case)"
        )
    else:  # other processes held the CPUs: the client got less than a core
        who = "the CPU the client could get"
        share = (
            "other work on this machine held the CPUs: this process's threads spent "
            f"{load.cpu_ms_per_case:.2f} ms of CPU and {load.wait_ms_per_case:.2f} ms waiting "
            f"for one per case, {load.busy:.1f}x the wall time between them"
        )
    return (
        f"{who} limited this run at concurrency {load.concurrency}: "
        f"{share}, so cases queued for the client, "
        "not only for the target: the run took longer than the target needed, and "
        "the latencies, timed by the client's own clock, include that wait; "
        f"concurrency {honest} or less would measure the target honestly "
        "(or give the client more CPU)"
    )
