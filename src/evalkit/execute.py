"""Run a target over a golden set: target × goldens → one row per case.

Cases run on a bounded thread pool (``concurrency``), optionally under a
requests-per-second limit.  Latency is measured by the target around its own
request, so time spent waiting for a free slot is never counted.  Rows come
back in golden-set order whatever order they complete in.  A case that fails
becomes a row with ``error`` set and no metric values: never a zero.
"""

from __future__ import annotations

import math
import queue
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from evalkit import registry
from evalkit.errors import EvalkitError, InputError, MetricError, RuntimeFailure
from evalkit.goldens import GoldenCase, GoldenSet
from evalkit.results import CaseResult, RunResult
from evalkit.targets.base import Target, TargetResponse

RowCallback = Callable[[int, CaseResult], None]


class RateLimiter:
    """Spaces request starts at least ``1/rate`` seconds apart, across threads."""

    def __init__(self, per_second: float) -> None:
        if not per_second > 0 or not math.isfinite(per_second):
            raise InputError(f"rate limit must be a positive number, got {per_second!r}")
        self._interval = 1.0 / per_second
        self._next = time.monotonic()
        self._lock = threading.Lock()

    def acquire(self) -> None:
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self._interval
        delay = start - time.monotonic()
        if delay > 0:
            time.sleep(delay)


@dataclass(frozen=True)
class RunOptions:
    """How to run: parallelism, pacing, and the per-case deadline."""

    concurrency: int = 1
    rate_limit: float | None = None
    case_timeout_s: float | None = None

    def __post_init__(self) -> None:
        if isinstance(self.concurrency, bool) or not isinstance(self.concurrency, int):
            raise InputError(f"concurrency must be an integer, got {self.concurrency!r}")
        if self.concurrency < 1:
            raise InputError(f"concurrency must be at least 1, got {self.concurrency}")
        if self.case_timeout_s is not None and not self.case_timeout_s > 0:
            raise InputError(f"case timeout must be positive, got {self.case_timeout_s!r}")


def resolve_metrics(metrics: Sequence[str]) -> tuple[list[registry.MetricDef], list[str]]:
    """Split metric names into per-case definitions and aggregate names; unknown raises."""
    if isinstance(metrics, str):
        raise MetricError(f"metrics must be a list of names, e.g. [{metrics!r}], not a str")
    case_defs: list[registry.MetricDef] = []
    aggregates: list[str] = []
    seen: set[str] = set()
    for name in metrics:
        if name in seen:
            raise MetricError(f"metric {name!r} is listed twice")
        seen.add(name)
        defn = registry.get_metric(name)
        if defn.kind == "aggregate":
            aggregates.append(name)
        else:
            case_defs.append(defn)
    return case_defs, aggregates


def score_case(
    case: GoldenCase, response: TargetResponse, metrics: Sequence[registry.MetricDef]
) -> CaseResult:
    """Compute every per-case metric; a judge failure marks the case failed."""
    values: dict[str, float] = {}
    for defn in metrics:
        try:
            value = defn.fn(response, case)
        except RuntimeFailure as exc:
            return CaseResult(case.id, response, {}, error=f"{defn.name}: {exc}")
        except EvalkitError as exc:
            raise type(exc)(f"case {case.id!r}, metric {defn.name!r}: {exc}") from exc
        except Exception as exc:
            raise MetricError(
                f"metric {defn.name!r} raised {type(exc).__name__} on case {case.id!r}: {exc}"
            ) from exc
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise MetricError(
                f"metric {defn.name!r} returned {value!r} on case {case.id!r}; expected a float"
            )
        if not math.isfinite(value):
            raise MetricError(
                f"metric {defn.name!r} returned {value} on case {case.id!r}; a score must be finite"
            )
        values[defn.name] = float(value)
    return CaseResult(case.id, response, values)


def _invoke(
    target: Target,
    case: GoldenCase,
    metrics: Sequence[registry.MetricDef],
    limiter: RateLimiter | None,
) -> CaseResult:
    if limiter is not None:
        limiter.acquire()
    try:
        response: object = target.invoke(case)
    except RuntimeFailure as exc:
        return CaseResult(case.id, None, {}, error=str(exc))
    except EvalkitError:
        raise
    except Exception as exc:
        # A target that is not ours raised something unexpected: keep the run going
        # and say exactly what happened on this case.
        return CaseResult(
            case.id, None, {}, error=f"target {target.name!r} raised {type(exc).__name__}: {exc}"
        )
    if not isinstance(response, TargetResponse):
        return CaseResult(
            case.id,
            None,
            {},
            error=f"target {target.name!r} returned {type(response).__name__}, not TargetResponse",
        )
    return score_case(case, response, metrics)


def evaluate(
    target: Target,
    goldens: GoldenSet | Iterable[GoldenCase],
    metrics: Sequence[str],
    *,
    name: str | None = None,
    concurrency: int = 1,
    rate_limit: float | None = None,
    case_timeout_s: float | None = None,
    skip: Iterable[str] = (),
    on_row: RowCallback | None = None,
) -> RunResult[CaseResult]:
    """Invoke ``target`` on every case and score it with ``metrics``.

    Aggregates among ``metrics`` are checked to exist and computed later from
    the rows.  ``skip`` names cases already done (resume); ``on_row`` is called
    for each finished row, in completion order, from the calling thread.
    """
    options = RunOptions(concurrency, rate_limit, case_timeout_s)
    case_defs, _ = resolve_metrics(metrics)
    cases = list(goldens)
    if not cases:
        raise InputError("the golden set is empty: nothing to evaluate")
    skipped = set(skip)
    todo = [(i, c) for i, c in enumerate(cases) if c.id not in skipped]
    limiter = RateLimiter(options.rate_limit) if options.rate_limit else None
    rows: dict[int, CaseResult] = {}

    def finish(index: int, row: CaseResult) -> None:
        rows[index] = row
        if on_row is not None:
            on_row(index, row)

    if options.concurrency == 1 and options.case_timeout_s is None:
        for index, case in todo:
            finish(index, _invoke(target, case, case_defs, limiter))
    else:
        _run_pool(target, todo, case_defs, limiter, options, finish)
    ordered = [rows[i] for i, _ in todo]
    return RunResult(name or target.name, ordered)


def _run_pool(
    target: Target,
    todo: Sequence[tuple[int, GoldenCase]],
    case_defs: Sequence[registry.MetricDef],
    limiter: RateLimiter | None,
    options: RunOptions,
    finish: Callable[[int, CaseResult], None],
) -> None:
    """One daemon thread per running case, at most ``concurrency`` at a time.

    Threads rather than a pool: a case that overruns its deadline is abandoned
    (reported as timed out) and its slot is freed at once, instead of blocking
    a pool worker that the next case would silently queue behind.
    """
    results: queue.Queue[tuple[int, CaseResult | BaseException]] = queue.Queue()
    running: dict[int, tuple[GoldenCase, float]] = {}
    waiting = list(reversed(todo))

    def work(index: int, case: GoldenCase) -> None:
        try:
            results.put((index, _invoke(target, case, case_defs, limiter)))
        except BaseException as exc:  # re-raised on the calling thread
            results.put((index, exc))

    while waiting or running:
        while waiting and len(running) < options.concurrency:
            index, case = waiting.pop()
            running[index] = (case, time.monotonic())
            threading.Thread(target=work, args=(index, case), daemon=True).start()
        timeout = None
        if options.case_timeout_s is not None:
            oldest = min(started for _, started in running.values())
            timeout = max(0.0, oldest + options.case_timeout_s - time.monotonic())
        try:
            index, outcome = results.get(timeout=timeout)
        except queue.Empty:
            pass
        else:
            if index in running:  # a late answer from an abandoned case is dropped
                del running[index]
                if isinstance(outcome, BaseException):
                    raise outcome
                finish(index, outcome)
        if options.case_timeout_s is not None:
            now = time.monotonic()
            for index, (case, started) in list(running.items()):
                if now - started >= options.case_timeout_s:
                    del running[index]
                    error = f"timed out after {options.case_timeout_s:g}s"
                    finish(index, CaseResult(case.id, None, {}, error=error))
