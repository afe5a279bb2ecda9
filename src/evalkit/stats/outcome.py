"""What a paired comparison returns: frozen values, no formatting."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

from evalkit.errors import MetricError
from evalkit.stats.names import Correction, Method

Kind = Literal["case", "aggregate"]


@dataclass(frozen=True)
class StatWarning:
    """A reason to read a result with care; ``code`` is stable, ``message`` is for people."""

    code: Literal["small_n", "skewed", "aggregate_small_n", "no_wins", "few_clusters"]
    message: str


@dataclass(frozen=True)
class BootstrapResult:
    """One metric of a paired comparison of system a against system b.

    ``observed`` is ``mean(a) - mean(b)`` over the paired cases (for an
    aggregate, ``agg(a) - agg(b)``).  ``ci_low``/``ci_high`` are always the
    percentile bootstrap interval at ``1 - alpha``.  ``p_value`` and
    ``significant`` come from ``method``: for ``bootstrap`` (the default, the
    spec's rule) ``significant`` means the interval excludes 0 and ``p_value``
    is the centred-null bootstrap p; for ``permutation`` and ``t`` both come
    from that test and ``significant`` means ``p_value <= alpha``.
    ``wins``/``losses``/``ties`` count cases where a is better / worse / equal
    for the metric's direction (:mod:`evalkit.stats.ties`).
    """

    metric: str
    name_a: str
    name_b: str
    observed: float
    ci_low: float
    ci_high: float
    p_value: float
    significant: bool
    n_queries: int
    n_resamples: int
    alpha: float = 0.05
    method: Method = "bootstrap"
    kind: Kind = "case"
    value_a: float | None = None
    value_b: float | None = None
    wins: int | None = None
    losses: int | None = None
    ties: int | None = None
    sd_diff: float | None = None
    se: float = 0.0
    mde: float = 0.0
    seed: int = 42
    stream: str = ""
    resampling: str = ""
    null: str = ""
    warnings: tuple[StatWarning, ...] = ()
    correction: Correction = "none"
    p_adjusted: float | None = None
    significant_adjusted: bool | None = None
    # The direction wins/losses/ties were counted in (None: "a higher" is a win).
    higher_is_better: bool | None = None

    @property
    def confidence(self) -> float:
        """Level of the interval, ``1 - alpha`` (0.95 by default)."""
        return 1.0 - self.alpha

    @property
    def ci(self) -> tuple[float, float]:
        return (self.ci_low, self.ci_high)

    @property
    def decision(self) -> bool:
        """The verdict to act on: the corrected decision when a correction ran."""
        if self.significant_adjusted is not None:
            return self.significant_adjusted
        return self.significant

    @property
    def direction(self) -> Literal[-1, 0, 1]:
        """+1 when a is significantly higher than b, -1 when lower, 0 when undecided.

        Uses :attr:`decision`; for the bootstrap method without a correction it
        is the side of 0 the interval lies on.
        """
        if not self.decision:
            return 0
        if self.method == "bootstrap" and self.p_adjusted is None:
            return 1 if self.ci_low > 0 else -1
        if self.observed > 0:
            return 1
        return -1 if self.observed < 0 else 0

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values (for artefacts and reporters)."""
        out = asdict(self)
        out["confidence"] = self.confidence
        out["warnings"] = [asdict(w) for w in self.warnings]
        return out


@dataclass(frozen=True)
class Comparison:
    """Every metric of one paired comparison, resampled together."""

    results: tuple[BootstrapResult, ...]
    name_a: str
    name_b: str
    n_queries: int
    n_resamples: int
    alpha: float
    method: Method
    correction: Correction
    seed: int
    stream: str
    false_alarm_chance: float = 0.0

    @property
    def metrics(self) -> list[str]:
        return [r.metric for r in self.results]

    @property
    def n_tests(self) -> int:
        return len(self.results)

    def __getitem__(self, metric: str) -> BootstrapResult:
        for result in self.results:
            if result.metric == metric:
                return result
        raise MetricError(
            f"metric {metric!r} is not part of this comparison (compared: "
            f"{', '.join(self.metrics)})"
        )

    def __iter__(self) -> Iterator[BootstrapResult]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def to_dict(self) -> dict[str, Any]:
        head = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "results"}
        head["n_tests"] = self.n_tests
        # the results come last and n_tests before false_alarm_chance (artefacts keep order)
        head["false_alarm_chance"] = head.pop("false_alarm_chance")
        return {**head, "results": [r.to_dict() for r in self.results]}
