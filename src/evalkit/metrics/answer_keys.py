"""The golden keys answer metrics read, beyond 0.2.0's ``expected``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit.errors import MetricError

if TYPE_CHECKING:
    from evalkit._model.golden_cases import GoldenCase
    from evalkit._model.results import TargetResponse


ANSWERS_KEY = "answers"
MUST_INCLUDE_KEY = "must_include"
MUST_NOT_INCLUDE_KEY = "must_not_include"
HUMAN_GRADE_KEY = "human_grade"
GRADED_ANSWER_KEY = "graded_answer"
# The keys holding a list of strings (checked and read as text at load).
PHRASE_KEYS = (ANSWERS_KEY, MUST_INCLUDE_KEY, MUST_NOT_INCLUDE_KEY)


def phrase_list(case: GoldenCase, key: str) -> list[str] | None:
    """The strings under ``key`` in the case, or ``None`` when the key is absent."""
    if key not in case.context or case.context[key] is None:
        return None
    raw = case.context[key]
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, list | tuple):
        raise MetricError(
            f"case {case.id!r}: {key} must be a list of strings, got {type(raw).__name__}"
        )
    out: list[str] = []
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise MetricError(f"case {case.id!r}: {key} must hold non-empty strings, got {item!r}")
        out.append(item)
    return out


def reference_answers(case: GoldenCase, metric: str) -> list[str]:
    """``expected`` followed by the ``answers`` key; none at all raises, naming the case."""
    refs = [case.expected_text] if case.expected_text is not None else []
    refs.extend(phrase_list(case, ANSWERS_KEY) or [])
    if not refs:
        # 0.2.0's shape: `expected` as a list (or a CSV `expected` column in a file
        # without a `relevant` column) holds relevant ids, never an answer.
        ids = (
            " (its 'expected' was read as relevant ids: a list, or in a CSV without a "
            "'relevant' column; add an empty 'relevant' column to make it the answer)"
            if case.relevant
            else ""
        )
        raise MetricError(
            f"{metric}: case {case.id!r} has no reference answer{ids}; give it 'expected' "
            f"(a string) or '{ANSWERS_KEY}' (a list of strings)"
        )
    return refs


def answer_text(response: TargetResponse, case: GoldenCase, metric: str) -> str:
    """The response's text; a ranking-only response raises instead of scoring 0."""
    if not response.has_text:
        shape = "a ranking of ids" if response.has_ids else "no text"
        raise MetricError(
            f"{metric}: case {case.id!r}: the target returned {shape}, but this metric "
            "scores a text answer; point the target's extract at the answer text"
        )
    text: object = response.text
    if not isinstance(text, str):
        raise MetricError(
            f"{metric}: case {case.id!r}: the answer is {type(text).__name__}, not text"
        )
    return text


def human_grade(case: GoldenCase, scale: int) -> int | None:
    """The case's ``human_grade`` (an integer within ``1..scale``), if any."""
    raw = case.context.get(HUMAN_GRADE_KEY)
    if raw is None or raw == "":
        return None
    if isinstance(raw, str) and raw.strip().isdigit():  # a CSV cell
        raw = int(raw.strip())
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise MetricError(
            f"case {case.id!r}: {HUMAN_GRADE_KEY} must be an integer grade, got {raw!r}"
        )
    if not 1 <= raw <= scale:
        raise MetricError(
            f"case {case.id!r}: {HUMAN_GRADE_KEY} {raw} is outside the judge's scale 1..{scale}"
        )
    return int(raw)


def graded_answer(case: GoldenCase) -> str | None:
    """The answer text the case's ``human_grade`` was given to, if the golden says."""
    raw = case.context.get(GRADED_ANSWER_KEY)
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise MetricError(
            f"case {case.id!r}: {GRADED_ANSWER_KEY} must be the graded text, got "
            f"{type(raw).__name__}"
        )
    if HUMAN_GRADE_KEY not in case.context:
        raise MetricError(
            f"case {case.id!r}: {GRADED_ANSWER_KEY} is given without a {HUMAN_GRADE_KEY}"
        )
    return raw
