"""Waiting out rate limits: read ``Retry-After`` and spend a bounded waiting budget.

A 429 is the server saying "not now", not "no": when the user opts in (a
positive budget), the client waits as long as the server asks and tries again.
The budget bounds the *total* waiting of one client across all its threads,
so a run can never stall for longer than the user allowed.  A wait that does
not fit in what is left of the budget is not started at all: the caller fails
at once with a message that says so, rather than sleeping and failing anyway.

Only a 429 that says how long to wait (``Retry-After`` in seconds or as an
HTTP date, or ``retry-after-ms``) is waited out; a bare 429 gives no basis for
a wait and fails as before.
"""

from __future__ import annotations

import email.utils
import math
import threading
import time
from collections.abc import Callable, Mapping

from evalkit._util.log import get_logger

__all__ = ["WaitBudget", "rate_limit_advice", "retry_after_seconds"]

_log = get_logger(__name__)


def retry_after_seconds(
    headers: Mapping[str, str], *, now: Callable[[], float] = time.time
) -> float | None:
    """Seconds the server asked to wait, or ``None`` when it did not say (or said nonsense).

    ``headers`` must have lower-case names (httpx's ``Headers`` matches any case).
    ``retry-after-ms`` (Azure OpenAI, Anthropic) wins over ``retry-after``.
    """
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            value = float(ms) / 1000.0
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value >= 0:
            return value
    raw = headers.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        seconds = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:  # an HTTP date is GMT by definition
            return None
        return max(0.0, when.timestamp() - now())
    if not math.isfinite(seconds) or seconds < 0:
        return None
    return seconds


class WaitBudget:
    """A thread-safe allowance of seconds to spend waiting, and the waiting itself.

    The one owner of every rate-limit wait: the judges, the HTTP target and the GitHub
    client each spend one.  ``max_waits`` also bounds how many waits it grants (GitHub:
    a server that keeps asking for 0 s must not loop forever)."""

    def __init__(
        self,
        total_s: float,
        *,
        sleep: Callable[[float], None] = time.sleep,
        max_waits: int | None = None,
        who: str = "a server",
    ) -> None:
        if isinstance(total_s, bool) or not isinstance(total_s, int | float):
            raise ValueError(f"a wait budget must be a number of seconds, got {total_s!r}")
        if not math.isfinite(total_s) or total_s < 0:
            raise ValueError(f"a wait budget must be a finite number >= 0, got {total_s!r}")
        self.total_s = float(total_s)
        self._spent = 0.0
        self._waits = 0
        self._max_waits = max_waits
        self._lock = threading.Lock()
        self._sleep = sleep
        self._who = who  # whose rate limit is waited out, for the log

    @property
    def enabled(self) -> bool:
        return self.total_s > 0

    @property
    def spent_s(self) -> float:
        with self._lock:
            return self._spent

    @property
    def left_s(self) -> float:
        with self._lock:
            return self.total_s - self._spent

    def wait(self, seconds: float) -> bool:
        """Sleep ``seconds`` if they fit in what is left (and reserve them); else ``False``."""
        with self._lock:
            if seconds > self.total_s - self._spent:
                return False
            if self._max_waits is not None and self._waits >= self._max_waits:
                return False
            self._spent += seconds
            self._waits += 1
            left = self.total_s - self._spent
        _log.info(
            "%s asked to wait %.1f s (rate limited); waiting, then retrying (%.1f s of the "
            "%.1f s wait budget left)",
            self._who,
            seconds,
            left,
            self.total_s,
        )
        if seconds > 0:
            self._sleep(seconds)
        return True


def rate_limit_advice(budget: WaitBudget, wait: float | None, setting: str) -> str:
    """Why a 429 was not waited out, and what to set (``setting``: the budget's name)."""
    if wait is None:
        return "the server gave no Retry-After, so there is nothing to wait out"
    if not budget.enabled:
        return (
            f"it asked to wait {wait:g} s: set {setting} to wait out rate limits, or lower "
            "concurrency / rate_limit"
        )
    return (
        f"it asked to wait {wait:g} s but only {budget.left_s:g} s of {setting} "
        f"({budget.total_s:g} s) is left"
    )
