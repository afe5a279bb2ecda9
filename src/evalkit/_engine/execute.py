"""Run a target over a golden set: target × goldens → one row per case."""

from __future__ import annotations

import contextlib
import math
import queue
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from evalkit._engine.client_load import (
    ClientLoad,
    ClientSaturationWarning,
    ThreadWait,
    saturation_warning,
)
from evalkit._model import registry
from evalkit._model.golden_cases import GoldenCase, GoldenSet
from evalkit._model.registry import resolve_metrics
from evalkit._model.results import CaseResult, RunResult, TargetResponse
from evalkit._util.log import get_logger
from evalkit._util.ratelimit import RateLimiter
from evalkit.errors import EvalkitError, InputError, MetricError, RuntimeFailure
from evalkit.metrics.judge_guard import run_preflights
from evalkit.targets.base import Target

RowCallback = Callable[[int, CaseResult], None]

# The clocks of the client-saturation check (module attributes so tests inject them).
_wall_clock: Callable[[], float] = time.perf_counter
_cpu_clock: Callable[[], float] = time.process_time
_thread_wait: Callable[[], ThreadWait] = ThreadWait


_log = get_logger(__name__)


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
        if self.case_timeout_s is not None and not (
            self.case_timeout_s > 0 and math.isfinite(self.case_timeout_s)
        ):
            raise InputError(
                f"case timeout must be a positive number of seconds, got {self.case_timeout_s!r}"
            )


def _judge_value(defn: registry.MetricDef, response: TargetResponse, case: GoldenCase) -> Any:
    """The metric's value; an LLM judge's grade also lands in the row's meta."""
    from evalkit.metrics.judge_base import JudgeBase

    if not isinstance(defn.fn, JudgeBase):
        return defn.fn(response, case)
    grade = defn.fn.grade(response, case)
    response.meta.update(grade.as_meta(prefix=defn.name))
    return float(grade.score)


def score_case(
    case: GoldenCase, response: TargetResponse, metrics: Sequence[registry.MetricDef]
) -> CaseResult:
    """Compute every per-case metric; a judge failure marks the case failed."""
    values: dict[str, float] = {}
    for defn in metrics:
        try:
            value = _judge_value(defn, response, case)
        except InputError as exc:
            # First: a configuration mismatch that is also a RuntimeFailure (ids asked
            # of a text response) must stop the run, not pass as one failed case.
            raise type(exc)(f"case {case.id!r}, metric {defn.name!r}: {exc}") from exc
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
        if not defn.admits(value):
            assert defn.bounds is not None
            raise MetricError(
                f"metric {defn.name!r} returned {value} on case {case.id!r}, outside its "
                f"declared range {registry.bounds_text(defn.bounds)}; fix the metric (or its "
                "bounds=)"
            )
        values[defn.name] = float(value)
    return CaseResult(case.id, response, values)


def _failed(case: GoldenCase, error: str) -> CaseResult:
    """The row of a case that got no response."""
    return CaseResult(case.id, None, {}, error=error)


def timed_out(case: GoldenCase, deadline_s: float) -> CaseResult:
    """The row of a case that did not finish within its deadline."""
    return _failed(case, f"timed out after {deadline_s:g}s")


def _invoke(
    target: Target,
    case: GoldenCase,
    metrics: Sequence[registry.MetricDef],
    limiter: RateLimiter | None,
    late: Callable[[], bool] | None = None,
) -> CaseResult:
    """Run and score one case."""
    if limiter is not None:
        limiter.acquire()
    try:
        response: object = target.invoke(case)
    except RuntimeFailure as exc:
        return _failed(case, str(exc))
    except EvalkitError:
        raise
    except Exception as exc:
        # A target that is not ours raised something unexpected: keep the run going
        # and say exactly what happened on this case.
        return _failed(case, f"target {target.name!r} raised {type(exc).__name__}: {exc}")
    if not isinstance(response, TargetResponse):
        kind = type(response).__name__
        return _failed(case, f"target {target.name!r} returned {kind}, not TargetResponse")
    if late is not None and late():
        return _failed(case, "late")  # replaced by the timeout row
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

    When this process's own CPU limited the run (``evalkit._engine.client_load``), a
    :class:`ClientSaturationWarning` says so and names a concurrency that would
    measure the target honestly.
    """
    options = RunOptions(concurrency, rate_limit, case_timeout_s)
    case_defs, _ = resolve_metrics(metrics)
    cases = list(goldens)
    if not cases:
        raise InputError("the golden set is empty: nothing to evaluate")
    skipped = set(skip)
    todo = [(i, c) for i, c in enumerate(cases) if c.id not in skipped]
    if skipped:
        _log.info(
            "%d of %d case(s) already done (resumed): not run again",
            len(cases) - len(todo),
            len(cases),
        )
        _log.debug("cases not run again: %s", ", ".join(sorted(skipped)))
    if todo:  # a judge's credentials and cache are checked before any target call
        run_preflights(d.fn for d in case_defs)
    limiter = RateLimiter(options.rate_limit) if options.rate_limit else None
    # Let a target that pools connections keep one per slot (``expect_concurrency``).
    expect = getattr(target, "expect_concurrency", None)
    if callable(expect):
        expect(options.concurrency)
    rows: dict[int, CaseResult] = {}

    def finish(index: int, row: CaseResult) -> None:
        rows[index] = row
        if on_row is not None:
            on_row(index, row)

    from evalkit.metrics.judge_base import paced_judges

    cpu_waits: list[float] = []  # per case, by its thread; one at a time is never judged
    wall_start, cpu_start = _wall_clock(), _cpu_clock()
    with paced_judges(case_defs, options.rate_limit):
        if options.concurrency == 1 and options.case_timeout_s is None:
            for index, case in todo:
                finish(index, _invoke(target, case, case_defs, limiter))
        else:
            _run_pool(target, todo, case_defs, limiter, options, finish, cpu_waits)
    ordered = [rows[i] for i, _ in todo]
    load = ClientLoad(
        cases=len(todo),
        concurrency=options.concurrency,
        wall_s=_wall_clock() - wall_start,
        cpu_s=_cpu_clock() - cpu_start,
        latencies_ms=[row.response.latency_ms for row in ordered if row.response is not None],
        cpu_wait_s=math.fsum(cpu_waits),
    )
    message = saturation_warning(load)
    if message is not None:
        warnings.warn(ClientSaturationWarning(message), stacklevel=2)
    return RunResult(name or target.name, ordered)


def _run_pool(
    target: Target,
    todo: Sequence[tuple[int, GoldenCase]],
    case_defs: Sequence[registry.MetricDef],
    limiter: RateLimiter | None,
    options: RunOptions,
    finish: Callable[[int, CaseResult], None],
    cpu_waits: list[float],
) -> None:
    """``concurrency`` worker threads take cases from a queue; this thread collects rows."""
    jobs: queue.SimpleQueue[tuple[int, GoldenCase]] = queue.SimpleQueue()
    for job in todo:
        jobs.put(job)
    results: queue.SimpleQueue[tuple[int, CaseResult | BaseException]] = queue.SimpleQueue()
    running: dict[int, tuple[GoldenCase, float]] = {}
    finished_at: dict[int, float] = {}  # set by a worker the moment its call returns
    lock = threading.Lock()
    stop = threading.Event()
    deadline_s = options.case_timeout_s

    def work() -> None:
        # for the saturation check: this thread's wait for a CPU, per case
        with contextlib.closing(_thread_wait()) as waited:
            take_cases(waited)

    def take_cases(waited: ThreadWait) -> None:
        while not stop.is_set():
            if limiter is not None:
                limiter.acquire()
                if stop.is_set():
                    return
            try:
                index, case = jobs.get_nowait()
            except queue.Empty:
                return
            started = time.monotonic()
            with lock:
                running[index] = (case, started)

            def late(start: float = started) -> bool:
                return deadline_s is not None and time.monotonic() - start >= deadline_s

            try:
                outcome: CaseResult | BaseException = _invoke(
                    target, case, case_defs, None, late if deadline_s is not None else None
                )
            except BaseException as exc:  # re-raised on the calling thread
                outcome = exc
            finished_at[index] = time.monotonic()
            cpu_waits.append(waited.since_last())
            with lock:
                mine = running.pop(index, None) is not None
            if not mine:
                return  # abandoned after its deadline: a replacement holds this slot
            if (
                deadline_s is not None
                and isinstance(outcome, CaseResult)
                and finished_at[index] - started >= deadline_s
            ):
                outcome = timed_out(case, deadline_s)  # late: its answer is discarded
            results.put((index, outcome))

    def spawn() -> None:
        threading.Thread(target=work, name="evalkit-case", daemon=True).start()

    for _ in range(min(options.concurrency, len(todo))):
        spawn()
    pending = len(todo)
    try:
        while pending:
            timeout: float | None = None
            if deadline_s is not None:
                with lock:
                    oldest = min((started for _, started in running.values()), default=None)
                # Nothing running yet (workers pacing): look again within one deadline.
                timeout = min(
                    threading.TIMEOUT_MAX,  # a deadline of 1e300 s is "none", not an overflow
                    deadline_s
                    if oldest is None
                    else max(0.0, oldest + deadline_s - time.monotonic()),
                )
            try:
                index, outcome = results.get(timeout=timeout)
            except queue.Empty:
                pass
            else:
                if isinstance(outcome, BaseException):
                    raise outcome
                finish(index, outcome)
                pending -= 1
            if deadline_s is not None:
                now = time.monotonic()
                with lock:
                    # A case whose call returned within its deadline is its worker's to report.
                    expired = [
                        (i, case)
                        for i, (case, started) in running.items()
                        if now - started >= deadline_s
                        and finished_at.get(i, now) - started >= deadline_s
                    ]
                    for i, _ in expired:
                        del running[i]
                for i, case in expired:
                    spawn()
                    finish(i, timed_out(case, deadline_s))
                    pending -= 1
    finally:
        stop.set()
