"""The client-saturation warning: the rule on injected measurements, and evaluate's wiring."""

from __future__ import annotations

import itertools
import re
import warnings

import pytest

import evalkit._engine.execute as execute
from evalkit._engine.client_load import (
    HONEST_BUSY,
    SATURATED_BUSY,
    ClientLoad,
    ClientSaturationWarning,
    ThreadWait,
    honest_concurrency,
    saturation_warning,
)
from evalkit._engine.execute import evaluate
from evalkit.goldens import GoldenCase, GoldenSet
from evalkit.targets import TargetResponse


def load(**changes: object) -> ClientLoad:
    """1,000 cases at c=64 that kept the client 95% busy, 0.6 ms CPU each, latencies 20-40 ms."""
    base: dict[str, object] = {
        "cases": 1000,
        "concurrency": 64,
        "wall_s": 0.6 / 0.95,
        "cpu_s": 0.6,
        "latencies_ms": [20.0 + (i % 21) for i in range(1000)],
    }
    base.update(changes)
    return ClientLoad(**base)  # type: ignore[arg-type]


def test_a_saturated_run_says_so_and_names_an_honest_concurrency() -> None:
    message = saturation_warning(load())
    assert message is not None
    assert "the client's own CPU limited this run at concurrency 64" in message
    assert "busy 95% of the wall time" in message
    assert "0.60 ms of CPU per case" in message
    # lower decile of the latencies is 22 ms: floor(0.5 * 22 / 0.6) = 18
    assert "concurrency 18 or less would measure the target honestly" in message


def test_waiting_for_a_cpu_counts_as_busy_and_is_named() -> None:
    # 20% on a CPU, 70% waiting for one: other processes held the cores.
    message = saturation_warning(load(cpu_s=0.2, cpu_wait_s=0.7, wall_s=1.0))
    assert message is not None
    assert "other work on this machine held the CPUs" in message
    assert "0.20 ms of CPU and 0.70 ms waiting for one per case, 0.9x the wall time" in message
    # the demand per case is 0.9 ms: floor(0.5 * 22 / 0.9) = 12
    assert "concurrency 12 or less would measure the target honestly" in message
    assert saturation_warning(load(cpu_s=0.2, cpu_wait_s=0.5, wall_s=1.0)) is None  # 70%


def test_a_threads_wait_for_a_cpu_only_grows() -> None:
    waited = ThreadWait()
    try:
        readings = [waited.since_last() for _ in range(100)]
    finally:
        waited.close()
    assert all(r >= 0.0 for r in readings)
    assert waited.since_last() == 0.0  # closed: nothing more is read


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"cpu_s": 0.6, "wall_s": 1.0}, "busy 60%: the client had CPU to spare"),
        ({"concurrency": 1}, "one case at a time queues for nothing"),
        ({"cases": 64}, "no case waited for a slot"),
        ({"wall_s": 0.2, "cpu_s": 0.19}, "too short to tell"),
        ({"cpu_s": 0.01, "wall_s": 0.0105}, "cheap cases: the suggestion is above 64 anyway"),
        ({"latencies_ms": []}, "no latency to base a suggestion on"),
    ],
)
def test_no_warning_when_the_client_was_not_the_limit(changes: dict[str, object], why: str) -> None:
    assert saturation_warning(load(**changes)) is None, why


def test_the_threshold_is_the_documented_one() -> None:
    wall = 1.0
    below = load(wall_s=wall, cpu_s=SATURATED_BUSY * wall - 1e-9)
    at = load(wall_s=wall, cpu_s=SATURATED_BUSY * wall)
    assert saturation_warning(below) is None
    assert saturation_warning(at) is not None


@pytest.mark.parametrize("cpu_ms", [0.05, 0.1, 0.3, 0.6, 1.0, 2.5, 10.0])
@pytest.mark.parametrize("latency_ms", [1.0, 5.0, 20.0, 100.0, 1000.0])
def test_the_honest_concurrency_keeps_the_client_at_most_half_busy(
    cpu_ms: float, latency_ms: float
) -> None:
    # Little's law: c cases of latency L in flight cost c * cpu / L of one core.
    got = load(cpu_s=cpu_ms, cases=1000, latencies_ms=[latency_ms] * 1000)
    honest = honest_concurrency(got)
    assert honest is not None
    assert honest >= 1
    if honest > 1:
        assert honest * cpu_ms / latency_ms <= HONEST_BUSY + 1e-9
        assert (honest + 1) * cpu_ms / latency_ms > HONEST_BUSY


# --- evaluate() runs the check on what it measured ------------------------------------


class Answer:
    name = "fixed"

    def invoke(self, case: GoldenCase) -> TargetResponse:
        return TargetResponse([f"doc-{case.id}"], latency_ms=20.0)


def goldens(n: int) -> GoldenSet:
    return GoldenSet(
        GoldenCase(id=f"c{i:03d}", query="q", relevant=frozenset({f"doc-c{i:03d}"}))
        for i in range(n)
    )


@pytest.fixture
def clocks(monkeypatch: pytest.MonkeyPatch) -> dict[str, float]:
    """evaluate()'s clocks, injected: one run takes ``wall`` s and ``cpu`` s of CPU."""
    measured = {"wall": 2.0, "cpu": 1.9}
    wall = itertools.cycle([0.0, 1.0])
    cpu = itertools.cycle([0.0, 1.0])
    monkeypatch.setattr(execute, "_wall_clock", lambda: next(wall) * measured["wall"])
    monkeypatch.setattr(execute, "_cpu_clock", lambda: next(cpu) * measured["cpu"])
    monkeypatch.setattr(execute, "_thread_wait", NoWait)
    return measured


class NoWait(ThreadWait):
    """A thread that never waits for a CPU (the machine's real load left out)."""

    def _read(self) -> float:
        return 0.0


def test_evaluate_warns_when_its_measurements_say_the_client_was_saturated(
    clocks: dict[str, float],
) -> None:
    # 200 cases, 1.9 s of CPU in 2 s: 9.5 ms per case against 20 ms latencies -> c=1
    with pytest.warns(ClientSaturationWarning) as caught:
        result = evaluate(Answer(), goldens(200), ["recall@1"], concurrency=8)
    assert all(row.ok for row in result.per_query)
    (warning,) = caught
    message = str(warning.message)
    assert re.search(r"limited this run at concurrency 8: .* busy 95%", message)
    assert "concurrency 1 or less would measure the target honestly" in message


def test_evaluate_stays_quiet_when_the_client_had_cpu_to_spare(
    clocks: dict[str, float],
) -> None:
    clocks["cpu"] = 0.2  # 10% busy
    with warnings.catch_warnings():
        warnings.simplefilter("error", ClientSaturationWarning)
        evaluate(Answer(), goldens(200), ["recall@1"], concurrency=8)
