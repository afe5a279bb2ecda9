"""The SQuAD v1.1 evaluation formulas, written out plainly as the reference.

This follows the official ``evaluate-v1.1.py`` step by step (character loop for
punctuation, one regular expression for articles, ``Counter`` intersection for
F1, max over ground truths), with no attempt at speed: the tests and
``benchmarks/bench_answers.py`` compare evalkit's metrics with it.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable, Sequence


def normalize(s: str) -> str:
    s = s.lower()
    exclude = set(string.punctuation)
    s = "".join(ch for ch in s if ch not in exclude)
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def f1(prediction: str, ground_truth: str) -> float:
    pred = normalize(prediction).split()
    gold = normalize(ground_truth).split()
    common = Counter(pred) & Counter(gold)
    num_same = sum(common.values())
    if num_same == 0:
        return 0.0
    precision = num_same / len(pred)
    recall = num_same / len(gold)
    return (2 * precision * recall) / (precision + recall)


def em(prediction: str, ground_truth: str) -> float:
    return float(normalize(prediction) == normalize(ground_truth))


def best(metric: Callable[[str, str], float], prediction: str, truths: Sequence[str]) -> float:
    return max(metric(prediction, t) for t in truths)
