"""CallableTarget: a Python function as the system under test."""

from __future__ import annotations

import functools
import time

import pytest

from evalkit._model.results import CaseResult
from evalkit.errors import InputError, MetricError, TargetError
from evalkit.goldens import GoldenCase
from evalkit.targets import CallableTarget, Target, TargetResponse

CASE = GoldenCase(id="q1", query="cheap flights", relevant=frozenset({"d1"}))


def ranker(case: GoldenCase) -> list[str]:
    return [f"{case.id}-a", f"{case.id}-b"]


def test_a_list_of_ids_becomes_a_ranked_response() -> None:
    response = CallableTarget(ranker, name="local").invoke(CASE)
    assert response.ranked_ids == ["q1-a", "q1-b"]
    assert not response.has_text
    with pytest.raises(TargetError, match="expected a text output"):
        _ = response.text
    assert response.meta == {}


def test_the_callable_receives_the_whole_golden_case() -> None:
    seen: list[GoldenCase] = []

    def spy(case: GoldenCase) -> list[str]:
        seen.append(case)
        return []

    CallableTarget(spy).invoke(CASE)
    assert seen == [CASE]


def test_a_str_becomes_a_text_response_whose_ids_are_refused() -> None:
    response = CallableTarget(lambda case: f"answer to {case.query}", name="llm").invoke(CASE)
    assert response.text == "answer to cheap flights"
    with pytest.raises(MetricError, match="carries text, not ranked ids"):
        _ = response.ranked_ids


def test_tuples_and_int_ids_are_accepted_as_str_ids() -> None:
    response = CallableTarget(lambda _: (3, "d7", 11), name="ints").invoke(CASE)
    assert response.ranked_ids == ["3", "d7", "11"]


def test_an_empty_ranking_is_an_answer_not_an_error() -> None:
    assert CallableTarget(lambda _: [], name="empty").invoke(CASE).ranked_ids == []


def test_latency_is_the_measured_wall_time_of_the_call() -> None:
    def slow(case: GoldenCase) -> list[str]:
        time.sleep(0.05)
        return ["d1"]

    start = time.perf_counter()
    response = CallableTarget(slow).invoke(CASE)
    elapsed_ms = (time.perf_counter() - start) * 1000
    assert 50.0 <= response.latency_ms <= elapsed_ms


def test_a_returned_target_response_passes_through_with_its_fields() -> None:
    given = TargetResponse(["d1"], text="why", raw={"x": 1}, meta={"cost_usd": 0.25})
    response = CallableTarget(lambda _: given, name="rich").invoke(CASE)
    assert response.ranked_ids == ["d1"]
    assert response.text == "why"
    assert response.raw == {"x": 1}
    assert response.meta == {"cost_usd": 0.25}
    assert response.latency_ms > 0.0  # zero means "not measured": filled in


def test_a_returned_response_keeps_its_own_non_zero_latency() -> None:
    given = TargetResponse(["d1"], latency_ms=123.0)
    assert CallableTarget(lambda _: given, name="replay").invoke(CASE).latency_ms == 123.0


def test_a_returned_response_object_is_copied_not_mutated() -> None:
    cached = TargetResponse(["d1"])
    target = CallableTarget(lambda _: cached, name="cached")
    target.invoke(CASE)
    assert cached.latency_ms == 0.0


def test_an_exception_in_the_callable_names_target_case_and_cause() -> None:
    def broken(case: GoldenCase) -> list[str]:
        raise ValueError("index shard 3\nis offline")

    with pytest.raises(TargetError) as info:
        CallableTarget(broken, name="local").invoke(CASE)
    message = str(info.value)
    assert message.startswith("target 'local', case 'q1' raised ValueError")
    assert "index shard 3 is offline" in message
    assert "\n" not in message
    assert isinstance(info.value.__cause__, ValueError)


@pytest.mark.parametrize(
    ("returned", "shown", "hint"),
    [
        (None, "None", ""),
        ({"results": []}, "dict", "pick the ids out of it"),
        (b"bytes", "bytes", "decode it"),
        (42, "int", ""),
        (iter(["d1"]), "list_iterator", "wrap it in list"),
    ],
)
def test_a_return_of_the_wrong_type_says_what_is_accepted(
    returned: object, shown: str, hint: str
) -> None:
    target = CallableTarget(lambda _: returned, name="local")  # type: ignore[arg-type,return-value]
    with pytest.raises(TargetError) as info:
        target.invoke(CASE)
    message = str(info.value)
    assert message.startswith(f"target 'local', case 'q1': the callable returned {shown}")
    assert hint in message
    assert "a list of ids (best first), a str of text, or a TargetResponse" in message


@pytest.mark.parametrize(
    ("ids", "problem"),
    [
        (["d1", {"id": "d2"}], "item 1 is dict {'id': 'd2'}"),
        (["d1", None], "item 1 is None"),
        ([True], "item 0 is bool"),
        ([1.5], "item 0 is float"),
        (["d1", ""], "item 1 is an empty string"),
    ],
)
def test_a_list_with_a_bad_id_names_the_position(ids: list[object], problem: str) -> None:
    target = CallableTarget(lambda _: ids, name="local")  # type: ignore[arg-type,return-value]
    with pytest.raises(TargetError, match="case 'q1'") as info:
        target.invoke(CASE)
    assert problem in str(info.value)


def test_the_name_defaults_to_the_function_name() -> None:
    assert CallableTarget(ranker).name == "ranker"


@pytest.mark.parametrize(
    "fn",
    [lambda _: [], functools.partial(ranker)],
    ids=["lambda", "partial"],
)
def test_a_callable_without_a_usable_name_must_be_named(fn: object) -> None:
    with pytest.raises(InputError, match=r'pass name="\.\.\."'):
        CallableTarget(fn)  # type: ignore[arg-type]


def test_a_non_callable_is_refused() -> None:
    with pytest.raises(InputError, match="needs a callable taking a GoldenCase, got list"):
        CallableTarget(["d1"], name="x")  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["", "   ", 7])
def test_a_blank_or_non_str_name_is_refused(name: object) -> None:
    with pytest.raises(InputError, match="name must be a non-empty string"):
        CallableTarget(ranker, name=name)  # type: ignore[arg-type]


def test_it_is_a_target_and_its_response_welds_into_a_case_result() -> None:
    target = CallableTarget(ranker, name="local")
    assert isinstance(target, Target)
    row = CaseResult(case_id=CASE.id, response=target.invoke(CASE), metrics={"recall@1": 0.0})
    assert row.query_id == "q1"
    assert row.ok
    assert row.response is not None
    assert row.response.ranked_ids[0] == "q1-a"


def test_repr_names_the_target() -> None:
    assert "name='local'" in repr(CallableTarget(ranker, name="local"))


def test_each_invoke_calls_the_function_exactly_once() -> None:
    calls: list[str] = []

    def once(case: GoldenCase) -> list[str]:
        calls.append(case.id)
        raise RuntimeError("boom")

    with pytest.raises(TargetError):
        CallableTarget(once).invoke(CASE)
    assert calls == ["q1"]  # no retry for a local callable: it is not flaky I/O
