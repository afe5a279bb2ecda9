"""Waiting out rate limits: read ``Retry-After`` and spend a bounded waiting budget."""

from __future__ import annotations

import email.utils
import math
import threading
import time
from collections.abc import Callable, Mapping

from evalkit._util.log import get_logger

_log = get_logger(__name__)


def _seconds(text: str, per_second: float) -> float | None:
    try:
        value = float(text) / per_second
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def retry_after_seconds(
    headers: Mapping[str, str], *, now: Callable[[], float] = time.time
) -> float | None:
    """Seconds the server asked to wait, or ``None`` when it did not say (or said nonsense)."""
    ms = headers.get("retry-after-ms")
    in_ms = None if ms is None else _seconds(ms, 1000.0)
    if in_ms is not None:
        return in_ms
    raw = headers.get("retry-after")
    if raw is None:
        return None
    seconds = _seconds(raw.strip(), 1.0)
    if seconds is not None:
        return seconds
    try:  # not a number: an HTTP date (GMT by definition, so one without a zone is nonsense)
        when = email.utils.parsedate_to_datetime(raw.strip())
    except (TypeError, ValueError):
        return None
    return None if when.tzinfo is None else max(0.0, when.timestamp() - now())


class WaitBudget:
    """A thread-safe allowance of seconds to spend waiting, and the waiting itself."""

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
