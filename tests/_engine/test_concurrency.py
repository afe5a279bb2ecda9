"""evaluate() under concurrency, against real loopback servers driven by the real clients.

Ordering, the concurrency bound, honest latency (no slot or rate-limit waiting), the
spec's single-retry rule when many cases fail at once, per-case timeouts, connection
pooling, and the LLM judge grading concurrently inside the same slots.

No assertion here rests on how fast the machine happens to be: "all slots busy at
once" is a barrier the server's handlers must all reach, "finished out of order" is
forced by holding a reply until another case's row is in, and latency claims are
causal bounds (the clock runs inside ``invoke``; it spans the server's own delay).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from evalkit._engine.execute import evaluate
from evalkit._model.registry import register_metric
from evalkit._model.results import CaseResult, RunResult
from evalkit._util.ratelimit import RateLimiter
from evalkit.errors import MetricError
from evalkit.goldens import GoldenCase, GoldenSet
from evalkit.metrics import LLMJudge
from evalkit.targets import HttpTarget, TargetResponse
from evalkit.targets.callable import CallableTarget
from fakes import FakeAnthropic, Reply, error, grade
from servers.search import Drop, RecordedRequest, Reset, SearchServer, Step
from servers.search import Reply as Http

if TYPE_CHECKING:  # imported where used: a heavy import, kept out of collection
    import anthropic


def golden(n: int) -> GoldenSet:
    return GoldenSet(
        [
            GoldenCase(id=f"c{i:03d}", query=f"query {i}", relevant=frozenset({f"doc-c{i:03d}"}))
            for i in range(n)
        ]
    )


def answer(request: RecordedRequest) -> dict[str, Any]:
    """Each case's own answer, so a row mixed up with another case's is visible."""
    return {"results": [{"id": f"doc-{request.case_id}"}, {"id": "filler"}]}


OK = Http(json=answer)


def target(server: SearchServer, path: str = "/search", **kwargs: Any) -> HttpTarget:
    kwargs.setdefault("timeout_s", 5.0)
    return HttpTarget(
        url=server.url(path),
        name="search",
        build_payload=lambda case: {"id": case.id, "q": case.query},
        extract=lambda body: [r["id"] for r in body["results"]],
        **kwargs,
    )


@pytest.fixture
def server() -> Iterator[SearchServer]:
    with SearchServer(seed=3) as running:
        yield running


def run(
    server: SearchServer, n: int, *plan: Step, per_case: bool = False, **kwargs: Any
) -> RunResult[CaseResult]:
    server.route("/search", *plan, per_case=per_case)
    timeout_s = kwargs.pop("timeout_s", 5.0)
    metrics = kwargs.pop("metrics", ["recall@1"])
    with target(server, timeout_s=timeout_s) as t:
        return evaluate(t, golden(n), metrics, **kwargs)


def latencies(result: RunResult[CaseResult]) -> list[float]:
    return [row.response.latency_ms for row in result.per_query if row.response is not None]


HOLD_S = 10.0  # how long a held handler waits before giving up: only a broken run gets there


def all_at_once(parties: int) -> Callable[[RecordedRequest], dict[str, Any]]:
    """A reply body that waits until ``parties`` requests are being handled at once.

    If the client never has that many in flight, the barrier breaks after HOLD_S and
    the request fails with a 500: "fully used" is proven, not inferred from a wall time.
    """
    barrier = threading.Barrier(parties, timeout=HOLD_S)

    def body(request: RecordedRequest) -> dict[str, Any]:
        barrier.wait()
        return answer(request)

    return body


class Recording:
    """A target wrapper that records when each ``invoke`` was entered and left."""

    def __init__(self, inner: HttpTarget) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls: dict[str, tuple[float, float]] = {}
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()

    def expect_concurrency(self, concurrency: int) -> None:
        self.inner.expect_concurrency(concurrency)

    def invoke(self, case: GoldenCase) -> TargetResponse:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        entered = time.perf_counter()
        try:
            return self.inner.invoke(case)
        finally:
            left = time.perf_counter()
            with self._lock:
                self.in_flight -= 1
                self.calls[case.id] = (entered, left)


def assert_latency_inside_invoke(result: RunResult[CaseResult], recording: Recording) -> None:
    """Each case's latency is measured within its own invoke call, never before it."""
    for row in result.per_query:
        assert row.response is not None
        entered, left = recording.calls[row.case_id]
        assert row.response.latency_ms <= (left - entered) * 1000.0


# --- order, bound, honest latency ---------------------------------------------------------


def test_rows_come_back_in_golden_order_whatever_finishes_first(server: SearchServer) -> None:
    # The first case's reply is held until the last case's row is in: they must
    # finish out of order, whatever the machine's speed.
    last_done = threading.Event()

    def body(request: RecordedRequest) -> dict[str, Any]:
        if request.case_id == "c000":
            assert last_done.wait(HOLD_S)
        return answer(request)

    finished: list[str] = []

    def on_row(index: int, row: CaseResult) -> None:
        finished.append(row.case_id)
        if row.case_id == "c039":
            last_done.set()

    result = run(server, 40, Http(json=body, delay_s=(0.0, 0.01)), concurrency=8, on_row=on_row)
    assert result.ids() == golden(40).ids()
    for row in result.per_query:
        assert row.ok
        assert row.response is not None
        assert row.response.ranked_ids[0] == f"doc-{row.case_id}"  # its own answer
        assert row.metrics == {"recall@1": 1.0}
    assert finished.index("c000") > finished.index("c039")  # really out of order


def test_on_row_sees_every_row_once_from_the_calling_thread(server: SearchServer) -> None:
    import threading

    seen: list[tuple[int, str, str]] = []

    def on_row(index: int, row: CaseResult) -> None:
        seen.append((index, row.case_id, threading.current_thread().name))

    run(server, 20, Http(json=answer, delay_s=(0.0, 0.01)), concurrency=5, on_row=on_row)
    assert sorted((i, cid) for i, cid, _ in seen) == list(enumerate(golden(20).ids()))
    assert {name for _, _, name in seen} == {threading.current_thread().name}


def test_concurrency_is_bounded_and_fully_used(server: SearchServer) -> None:
    # Every group of 6 requests must be in the server at once to pass the barrier.
    result = run(server, 24, Http(json=all_at_once(6)), concurrency=6)
    assert all(row.ok for row in result.per_query)
    assert server.max_in_flight == 6


def test_latency_excludes_waiting_for_a_free_slot(server: SearchServer) -> None:
    # 8 cases of 50 ms through 2 slots: the last pair waits ~150 ms for a slot.  The
    # latency clock runs inside invoke, and invoke starts only once a slot is free.
    server.route("/search", Http(json=answer, delay_s=0.05))
    with target(server) as inner:
        recording = Recording(inner)
        result = evaluate(recording, golden(8), ["recall@1"], concurrency=2)
    assert recording.max_in_flight == 2  # queued cases waited outside invoke
    assert_latency_inside_invoke(result, recording)
    assert min(latencies(result)) >= 50.0  # it does span the server's own delay
    # and the queue was real: some case entered invoke only after another had left it
    spans = sorted(recording.calls.values())
    assert spans[-1][0] >= min(left for _, left in spans)


def test_rate_limiter_books_starts_exactly_one_interval_apart() -> None:
    now = [100.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)

    limiter = RateLimiter(40.0, clock=lambda: now[0], sleep=sleep)
    for _ in range(5):
        limiter.acquire()  # the clock stands still: each caller books the next slot
    assert slept == pytest.approx([0.025, 0.05, 0.075, 0.1])
    now[0] = 101.0  # idle for a while: the next start is not owed to the past
    slept.clear()
    limiter.acquire()
    assert slept == []


def test_rate_limit_spaces_starts_and_is_not_counted_as_latency(server: SearchServer) -> None:
    # At 40/s the k-th start is booked k x 25 ms after the limiter is made; a thread
    # may wake late, never early, so the k-th arrival is at least that late.
    server.route("/search", OK)
    with target(server) as inner:
        recording = Recording(inner)
        before = time.perf_counter()
        result = evaluate(recording, golden(10), ["recall@1"], concurrency=8, rate_limit=40.0)
    assert all(row.ok for row in result.per_query)
    arrivals = sorted(r.received_at for r in server.requests())
    entries = sorted(entered for entered, _ in recording.calls.values())
    for k in range(10):
        assert arrivals[k] - before >= k * 0.025
        assert entries[k] - before >= k * 0.025  # the pacing wait is before invoke ...
    assert_latency_inside_invoke(result, recording)  # ... so never inside the latency


def test_waiting_for_the_rate_limit_never_counts_against_the_case_timeout(
    server: SearchServer,
) -> None:
    # 9 starts at 2/s: the last starts >= 4 s after the run began, past the 3.5 s
    # deadline, so a deadline that counted the pacing would time it out; each case
    # itself needs a few ms of its 3.5 s (hundreds of times its quiet time, so a loaded
    # machine cannot time one out).
    before = time.perf_counter()
    result = run(server, 9, OK, concurrency=9, rate_limit=2.0, case_timeout_s=3.5)
    assert max(r.received_at for r in server.requests()) - before >= 4.0
    assert [row.error for row in result.per_query] == [None] * 9


# --- the single-retry rule, many cases failing at once ------------------------------------


@pytest.mark.parametrize(
    ("plan", "requests_per_case", "ok"),
    [
        pytest.param([Http(status=503), OK], 2, True, id="5xx-then-ok"),
        pytest.param([Reset(), OK], 2, True, id="reset-then-ok"),
        pytest.param([Drop(), OK], 2, True, id="dropped-then-ok"),
        pytest.param([Http(status=502)], 2, False, id="5xx-twice"),
        pytest.param([Http(status=500), Http(status=404)], 2, False, id="5xx-then-4xx"),
        pytest.param([Http(status=404)], 1, False, id="4xx-never-retried"),
        pytest.param([Http(status=429)], 1, False, id="429-is-a-4xx"),
        pytest.param([Http(status=200, body="<html>oops</html>")], 1, False, id="non-json"),
    ],
)
def test_every_case_gets_exactly_one_retry_on_5xx_or_transport_failure(
    server: SearchServer, plan: list[Step], requests_per_case: int, ok: bool
) -> None:
    result = run(server, 16, *plan, per_case=True, concurrency=8)
    assert server.counts_by_case("/search") == dict.fromkeys(golden(16).ids(), requests_per_case)
    assert [row.ok for row in result.per_query] == [ok] * 16
    for row in result.per_query:
        if ok:
            assert row.metrics == {"recall@1": 1.0}
        else:
            assert row.metrics == {}  # a failed case is never scored as zero
            assert row.error is not None
            assert f"case '{row.case_id}'" in row.error


def test_a_retried_case_reports_latency_across_both_attempts(server: SearchServer) -> None:
    result = run(
        server,
        8,
        Http(status=503, delay_s=0.04),
        Http(json=answer, delay_s=0.04),
        per_case=True,
        concurrency=4,
    )
    assert all(row.ok for row in result.per_query)
    assert min(latencies(result)) >= 80.0


def test_target_timeouts_under_load_are_retried_once_then_fail(server: SearchServer) -> None:
    # The server never answers within the test (its handlers sleep until it stops).
    result = run(server, 12, Http(json=answer, delay_s=600.0), timeout_s=0.5, concurrency=12)
    assert server.counts_by_case("/search") == dict.fromkeys(golden(12).ids(), 2)
    for row in result.per_query:
        assert row.error is not None
        assert "failed after 2 attempt(s)" in row.error
        assert "DeadlineExceeded: no complete reply within timeout_s=0.5 s" in row.error


def test_a_case_over_its_deadline_is_abandoned_and_frees_its_slot(server: SearchServer) -> None:
    # The first request to arrive hangs (until the server stops); the deadline is 1 s,
    # and every other case needs a few ms of it.
    result = run(
        server,
        12,
        Http(json=answer, delay_s=30.0),
        OK,
        concurrency=4,
        case_timeout_s=1.0,
        timeout_s=60.0,
    )
    (slow,) = [r.case_id for r in server.requests() if r.step is not None and r.step.delay_s == 30]
    assert slow is not None
    rows = {row.case_id: row for row in result.per_query}
    assert rows[slow].error == "timed out after 1s"
    assert rows[slow].metrics == {}
    assert all(row.ok for cid, row in rows.items() if cid != slow)
    assert result.ids() == golden(12).ids()
    # nobody queued behind the hung case, and it was not sent again
    assert server.count("/search") == 12
    # a fresh worker took the hung case's slot: 4 live slots plus the abandoned call
    assert server.max_in_flight <= 5


def test_a_metric_bug_in_a_worker_is_raised_on_the_calling_thread(server: SearchServer) -> None:
    @register_metric("broken", higher_is_better=True)
    def broken(response: TargetResponse, case: GoldenCase) -> float:
        if case.id == "c005":
            raise MetricError("cannot score this")
        return 1.0

    # Cases after c005 are held until the run has raised: each worker holds at most one
    # of them then, and a worker that went on after the run stopped would take more.
    stopped = threading.Event()
    earlier = set(threading.enumerate())  # other tests' abandoned workers are not this run's

    def body(request: RecordedRequest) -> dict[str, Any]:
        if request.case_id is not None and request.case_id > "c005":
            stopped.wait(HOLD_S)
        return answer(request)

    server.route("/search", Http(json=body))
    with target(server) as t:
        with pytest.raises(MetricError, match=r"case 'c005', metric 'broken': cannot score this"):
            evaluate(t, golden(60), ["broken"], concurrency=4)
        stopped.set()
        for worker in threading.enumerate():
            if worker.name == "evalkit-case" and worker not in earlier:
                worker.join(HOLD_S)
        # The target is still open, so a worker that went on would be seen here.  Which
        # cases before c005 were sent is the scheduler's business, so only the bound is held.
        counts = server.counts_by_case("/search")
        assert counts.get("c005") == 1, counts
        assert sum(counts.values()) <= 6 + 4, counts


# --- one connection pool, sized to the concurrency ----------------------------------------


def test_the_pool_keeps_one_connection_per_slot(server: SearchServer) -> None:
    # httpx keeps only 20 idle connections by default: at concurrency 32 the other 12
    # would be closed after every request and reopened for the next one.  Each round
    # of 32 requests is all in the server at once (the barrier), more than 20.
    result = run(server, 96, Http(json=all_at_once(32)), concurrency=32)
    assert all(row.ok for row in result.per_query)
    assert server.max_in_flight == 32
    assert server.connections_opened <= 32


def test_a_pool_built_smaller_is_replaced_and_closed_with_the_target(server: SearchServer) -> None:
    server.route("/search", Http(json=answer, delay_s=0.01))
    with target(server) as t:
        t.invoke(golden(1)[0])  # builds the default pool
        first = t._client
        assert first is not None
        result = evaluate(t, golden(64), ["recall@1"], concurrency=24)
        assert all(row.ok for row in result.per_query)
        sized = t._client
        assert sized is not first
        open_during_run = not first.is_closed  # a request in flight on it would survive
        evaluate(t, golden(8), ["recall@1"], concurrency=8)  # smaller: the pool stays
        assert t._client is sized
    assert open_during_run
    assert first.is_closed
    assert sized is not None
    assert sized.is_closed


def test_an_injected_client_keeps_its_own_limits(server: SearchServer) -> None:
    import httpx

    server.route("/search", OK)
    with httpx.Client() as client:
        t = target(server, client=client)
        t.expect_concurrency(50)
        assert t._client is client
        assert evaluate(t, golden(4), ["recall@1"], concurrency=4).per_query[0].ok


# --- the judge under load -----------------------------------------------------------------


@pytest.fixture
def api() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(default=grade(4, "fine").after(0.05)) as fake:
        yield fake


@pytest.fixture
def sdk(api: FakeAnthropic) -> Iterator[anthropic.Anthropic]:
    client = api.client()
    yield client
    client.close()


def answer_text(case: GoldenCase) -> str:
    return f"The answer to {case.query}."


def judged_run(
    judge: LLMJudge, n: int, concurrency: int, metric: str = "helpfulness"
) -> RunResult[CaseResult]:
    register_metric(metric, higher_is_better=True)(judge)
    return evaluate(
        CallableTarget(answer_text, name="writer"), golden(n), [metric], concurrency=concurrency
    )


def test_the_judge_grades_concurrently_within_the_same_slots(
    api: FakeAnthropic, sdk: anthropic.Anthropic, tmp_path: Path
) -> None:
    judge = LLMJudge(
        "Score 5 if right.", "claude-haiku-4-5", cache_path=tmp_path / "cache.json", client=sdk
    )
    # Each group of 6 gradings must be in the API at once to pass the barrier.
    barrier = threading.Barrier(6, timeout=HOLD_S)

    def respond(request: dict[str, Any]) -> Reply:
        barrier.wait()
        return grade(4, "fine")

    api.responder = respond
    result = judged_run(judge, 24, concurrency=6)
    assert [row.metrics for row in result.per_query] == [{"helpfulness": 4.0}] * 24
    assert api.max_in_flight == 6  # concurrent, and never beyond the run's bound
    assert len(api.message_requests) == 24
    assert len(judge.cache or []) == 24  # every grade persisted by concurrent writers


def test_token_usage_and_cost_land_in_each_row_meta(
    api: FakeAnthropic, sdk: anthropic.Anthropic, tmp_path: Path
) -> None:
    judge = LLMJudge(
        "Score 5 if right.",
        "claude-haiku-4-5",
        cache_path=tmp_path / "cache.json",
        client=sdk,
        prices={"input": 1.0, "output": 5.0},
    )
    result = judged_run(judge, 8, concurrency=4)
    for row in result.per_query:
        assert row.response is not None
        meta = row.response.meta
        assert meta["helpfulness_score"] == 4
        assert meta["helpfulness_reason"] == "fine"
        assert meta["helpfulness_model"] == "claude-haiku-4-5"
        assert meta["helpfulness_cached"] is False
        assert meta["helpfulness_input_tokens"] == 120
        assert meta["helpfulness_output_tokens"] == 30
        assert meta["helpfulness_cost_usd"] == pytest.approx((120 * 1.0 + 30 * 5.0) / 1e6)


def test_a_cached_rerun_spends_nothing_and_says_so(
    api: FakeAnthropic, sdk: anthropic.Anthropic, tmp_path: Path
) -> None:
    cache = tmp_path / "cache.json"
    judged_run(
        LLMJudge("Score 5 if right.", "claude-haiku-4-5", cache_path=cache, client=sdk), 8, 4
    )
    before = len(api.message_requests)
    replay = LLMJudge(
        "Score 5 if right.", "claude-haiku-4-5", cache_path=cache, client=sdk, cache_only=True
    )
    result = judged_run(replay, 8, 4, metric="replayed")
    assert len(api.message_requests) == before
    for row in result.per_query:
        assert row.response is not None
        assert row.metrics == {"replayed": 4.0}
        assert row.response.meta["replayed_cached"] is True
        assert "replayed_input_tokens" not in row.response.meta


def test_a_judge_failure_fails_only_its_case(api: FakeAnthropic, sdk: anthropic.Anthropic) -> None:
    def respond(request: dict[str, Any]) -> Reply:
        prompt = request["messages"][0]["content"]
        return error(529, "overloaded_error", "Overloaded") if "query 3." in prompt else grade(5)

    api.responder = respond
    api.default = None  # type: ignore[assignment]
    result = judged_run(
        LLMJudge("Score 5 if right.", "claude-haiku-4-5", client=sdk), 8, concurrency=4
    )
    rows = {row.case_id: row for row in result.per_query}
    assert rows["c003"].metrics == {}
    assert rows["c003"].error is not None
    assert rows["c003"].error.startswith("helpfulness: LLM judge 'claude-haiku-4-5' on case 'c003'")
    assert "529" in rows["c003"].error
    assert all(row.metrics == {"helpfulness": 5.0} for cid, row in rows.items() if cid != "c003")
