"""Pacing: request starts spaced by a rate, shared by the threads that start them."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from evalkit.errors import InputError

MIN_RATE_PER_S = 1 / 86_400  # one case a day


class RateLimiter:
    """Spaces request starts at least ``1/rate`` seconds apart, across threads."""

    def __init__(
        self,
        per_second: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not per_second > 0 or not math.isfinite(per_second):
            raise InputError(f"rate limit must be a positive number, got {per_second!r}")
        if per_second < MIN_RATE_PER_S:  # the wait between starts would overflow sleep()
            raise InputError(
                f"rate limit {per_second:g} per second is less than one case a day; "
                "give cases per second, e.g. 0.5"
            )
        self._interval = 1.0 / per_second
        self._clock = clock
        self._sleep = sleep
        self._next = clock()
        self._lock = threading.Lock()

    def acquire(self) -> None:
        """Block until this caller may start (reserves its slot first, so callers queue fairly)."""
        with self._lock:
            now = self._clock()
            start = max(now, self._next)
            self._next = start + self._interval
        delay = start - self._clock()
        if delay > 0:
            self._sleep(delay)
