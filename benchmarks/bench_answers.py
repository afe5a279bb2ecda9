"""Score 10^5 text answers with evalkit's answer metrics and with a plain-Python loop.

    uv run python benchmarks/bench_answers.py                  # 100,000 cases
    uv run python benchmarks/bench_answers.py --cases 5000     # a quick look

Generates seeded cases (one to three reference answers, required and forbidden
phrases, answers that are exact, paraphrased, padded with articles and
punctuation, empty, or JSON), then times, in the same process:

* **evalkit**: every answer metric kind called as the runner calls it,
  ``metric(response, case)``: exact_match, token_f1, contains_all,
  contains_any, excludes_forbidden, regex_match, json_valid, json_schema,
  answer_length;
* **reference**: the same nine numbers from a plain loop: the SQuAD v1.1
  evaluation functions as written in ``tests/answer_reference`` (the official
  script's formulas), lower-cased substring tests, ``re.search``,
  ``json.loads``, the schema's rules written out as ``isinstance`` checks, and
  ``len(text.split())``.

Every value is compared (they must agree exactly).  The last line printed is
one JSON object with ``evalkit_s``, ``reference_s`` and ``ratio``
(evalkit / reference: below 1 means evalkit is faster).
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from answer_reference import best, em, f1
from evalkit._model.golden_cases import GoldenCase
from evalkit.metrics.answers import (
    AnswerLength,
    AnswerMetric,
    ContainsAll,
    ContainsAny,
    ExactMatch,
    ExcludesPhrases,
    JsonSchemaMatch,
    JsonValid,
    RegexMatch,
    TokenF1,
)
from evalkit.targets.base import TargetResponse

WORDS = [
    "paris",
    "berlin",
    "rome",
    "canberra",
    "capital",
    "city",
    "river",
    "tower",
    "bridge",
    "museum",
    "opened",
    "built",
    "century",
    "king",
    "queen",
    "war",
    "treaty",
    "signed",
    "north",
    "south",
    "east",
    "west",
    "population",
    "million",
]
PATTERN = r"\b(18|19|20)\d\d\b"
# The JSON answers are {"answer": text, "year": int}; some break the schema on purpose.
SCHEMA = {
    "type": "object",
    "required": ["answer"],
    "properties": {"answer": {"type": "string"}, "year": {"type": "integer"}},
}
Case = tuple[GoldenCase, TargetResponse]


def generate(n: int, seed: int) -> list[Case]:
    rng = random.Random(seed)
    out: list[Case] = []
    for i in range(n):
        refs = [" ".join(rng.choices(WORDS, k=rng.randint(1, 4))) for _ in range(rng.randint(1, 3))]
        style = rng.random()
        if style < 0.25:
            answer = refs[0]
        elif style < 0.5:
            answer = f"The {refs[0].title()}, built in {rng.randint(1700, 2025)}."
        elif style < 0.8:
            answer = " ".join(rng.choices([*WORDS, "a", "the", "an"], k=rng.randint(3, 25)))
        elif style < 0.85:
            answer = json.dumps({"answer": refs[0], "year": rng.randint(1800, 2020)})
        elif style < 0.9:  # JSON that breaks the schema: a missing answer or a text year
            answer = json.dumps(rng.choice([{"year": 1900}, {"answer": refs[0], "year": "1900"}]))
        else:
            answer = ""
        must = rng.sample(WORDS, k=rng.randint(0, 2))
        never = [rng.choice(WORDS)]
        case = GoldenCase(
            id=f"c{i}",
            query=f"question {i}?",
            expected=refs[0],
            context={"answers": refs[1:], "must_include": must, "must_not_include": never},
        )
        out.append((case, TargetResponse(text=answer)))
    return out


def metrics() -> list[AnswerMetric]:
    return [
        ExactMatch(),
        TokenF1(),
        ContainsAll(),
        ContainsAny(),
        ExcludesPhrases(),
        RegexMatch(PATTERN),
        JsonValid(),
        JsonSchemaMatch(SCHEMA),
        AnswerLength(),
    ]


def run_evalkit(cases: list[Case]) -> list[list[float]]:
    scorers = metrics()
    return [[metric(response, case) for metric in scorers] for case, response in cases]


def _json_doc(text: str) -> tuple[bool, object]:
    try:
        doc = json.loads(text, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))
    except ValueError:
        return False, None
    return True, doc


def _schema_ok(doc: object) -> float:
    """SCHEMA written out by hand: an object with a string answer and, if any, an int year."""
    if not isinstance(doc, dict) or not isinstance(doc.get("answer", 0), str):
        return 0.0
    year = doc.get("year", 0)
    return 1.0 if isinstance(year, int) and not isinstance(year, bool) else 0.0


def run_reference(cases: list[Case]) -> list[list[float]]:
    out: list[list[float]] = []
    for case, response in cases:
        text = response.text or ""
        refs = [case.expected or "", *case.context["answers"]]
        low = " ".join(text.lower().split())
        must = [" ".join(p.lower().split()) for p in case.context["must_include"]]
        never = case.context["must_not_include"]
        parsed, doc = _json_doc(text)
        out.append(
            [
                best(em, text, refs),
                best(f1, text, refs),
                1.0 if all(p in low for p in must) else 0.0,
                1.0 if any(p in low for p in must) else 0.0,
                0.0 if any(" ".join(p.lower().split()) in low for p in never) else 1.0,
                1.0 if re.search(PATTERN, text) else 0.0,
                1.0 if parsed else 0.0,
                _schema_ok(doc) if parsed else 0.0,
                float(len(text.split())),
            ]
        )
    return out


Scorer = Callable[[list[Case]], list[list[float]]]


def timed(fn: Scorer, cases: list[Case]) -> tuple[list[list[float]], float, float]:
    """Values, wall seconds and CPU seconds (the machine may be shared: CPU is steadier)."""
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    values = fn(cases)
    return values, time.perf_counter() - start, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3, help="best of N timings")
    args = parser.parse_args()
    cases = generate(args.cases, args.seed)
    ek_values, ek_s, ek_cpu = timed(run_evalkit, cases)
    ref_values, ref_s, ref_cpu = timed(run_reference, cases)
    for _ in range(args.repeats - 1):
        _, wall, cpu = timed(run_evalkit, cases)
        ek_s, ek_cpu = min(ek_s, wall), min(ek_cpu, cpu)
        _, wall, cpu = timed(run_reference, cases)
        ref_s, ref_cpu = min(ref_s, wall), min(ref_cpu, cpu)
    mismatches = sum(a != b for a, b in zip(ek_values, ref_values, strict=True))
    n_metrics = len(metrics())
    per_case = 1e6 / args.cases
    print(f"{args.cases:,} cases x {n_metrics} answer metrics (best of {args.repeats})")
    for label, wall, cpu in (
        ("evalkit metric objects", ek_s, ek_cpu),
        ("plain-Python reference", ref_s, ref_cpu),
    ):
        print(f"{label}: {wall:.3f} s wall, {cpu:.3f} s CPU ({cpu * per_case:.1f} us CPU per case)")
    print(
        f"ratio evalkit / reference: {ek_s / ref_s:.3f} wall, {ek_cpu / ref_cpu:.3f} CPU; "
        f"cases that disagree: {mismatches}"
    )
    print(
        json.dumps(
            {
                "cases": args.cases,
                "metrics": n_metrics,
                "evalkit_s": round(ek_s, 3),
                "reference_s": round(ref_s, 3),
                "ratio": round(ek_s / ref_s, 3),
                "evalkit_cpu_s": round(ek_cpu, 3),
                "reference_cpu_s": round(ref_cpu, 3),
                "cpu_ratio": round(ek_cpu / ref_cpu, 3),
                "mismatched_cases": mismatches,
            }
        )
    )
    if mismatches:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
