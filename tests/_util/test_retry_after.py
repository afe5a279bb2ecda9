"""Retry-After parsing and the bounded waiting budget."""

from __future__ import annotations

import threading

import pytest

from evalkit._util.retry_after import WaitBudget, retry_after_seconds

NOW = 1_700_000_000.0  # 2023-11-14T22:13:20Z


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "2"}, 2.0),
        ({"retry-after": " 0.25 "}, 0.25),
        ({"retry-after": "0"}, 0.0),
        ({"retry-after-ms": "1500"}, 1.5),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after-ms": "soon", "retry-after": "9"}, 9.0),
        ({"retry-after": "Tue, 14 Nov 2023 22:13:50 GMT"}, 30.0),
        ({"retry-after": "Tue, 14 Nov 2023 22:13:00 GMT"}, 0.0),  # already past
        ({"retry-after": "-1"}, None),
        ({"retry-after": "nan"}, None),
        ({"retry-after": "inf"}, None),
        ({"retry-after": "later"}, None),
        ({}, None),
    ],
)
def test_retry_after_seconds(headers: dict[str, str], expected: float | None) -> None:
    assert retry_after_seconds(headers, now=lambda: NOW) == expected


def test_budget_spends_and_refuses_what_does_not_fit() -> None:
    slept: list[float] = []
    budget = WaitBudget(5, sleep=slept.append)
    assert budget.wait(2)
    assert budget.wait(3)
    assert not budget.wait(0.5)
    assert slept == [2, 3]
    assert budget.spent_s == 5.0
    assert budget.left_s == 0.0


def test_budget_grants_at_most_max_waits_even_of_nothing() -> None:
    # A server that keeps asking for 0 s would otherwise be waited out for ever.
    slept: list[float] = []
    budget = WaitBudget(5, sleep=slept.append, max_waits=3)
    assert [budget.wait(0) for _ in range(5)] == [True, True, True, False, False]
    assert slept == []


def test_zero_budget_is_off() -> None:
    budget = WaitBudget(0, sleep=lambda s: None)
    assert not budget.enabled
    assert not budget.wait(0.001)


@pytest.mark.parametrize("bad", [-1, float("inf"), float("nan"), True, "5"])
def test_bad_budget(bad: object) -> None:
    with pytest.raises(ValueError, match="wait budget"):
        WaitBudget(bad)  # type: ignore[arg-type]


def test_threads_never_overspend_the_budget() -> None:
    budget = WaitBudget(10, sleep=lambda s: None)
    granted: list[bool] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(50):
            ok = budget.wait(0.25)
            with lock:
                granted.append(ok)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(granted) == 40
    assert budget.spent_s == 10.0
