"""``paired_test``: the gate's verdict on one metric of two runs, as a library call (the
gate's and ``evalkit compare``'s own :func:`~evalkit.stats.clustered_decide.evaluator_by_cluster`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable

from evalkit._model.results import RunResult
from evalkit.stats.clustered_decide import (
    ClusteredEvaluator,
    ClusterLabels,
    cluster_labels,
    evaluator_by_cluster,
)
from evalkit.stats.names import checked_alpha
from evalkit.stats.pairing import RunLike
from evalkit.stats.procedures import DEFAULT_GATE_METHOD, PROCEDURE_NAMES
from evalkit.stats.stream import SeedLike, resolve_seed


@runtime_checkable
class HasRun(Protocol):
    """A run artefact (:func:`evalkit.read_artifact`): its rows are ``.result``."""

    @property
    def result(self) -> RunResult[Any]: ...


@dataclass(frozen=True)
class PairedTestResult:
    """One metric of ``a`` against ``b`` (Δ = a − b), decided as the gate decides it.

    ``p_value`` is two-sided and the dual of ``[ci_low, ci_high]``: ``p ≤ alpha``
    exactly when the interval excludes 0, which is ``significant``.
    """

    metric: str
    observed: float
    ci_low: float
    ci_high: float
    p_value: float
    significant: bool
    procedure: str  # what decided: "t", "bootstrap" or "permutation" (the gate report's key)
    alpha: float
    n: int
    method: str  # what was asked for ("auto": the default procedure)
    # With declared clusters: how many the n cases fall in, and how many of those cases
    # declared none (each its own cluster); None without clusters.
    clusters: int | None = None
    own_clusters: int | None = None

    @property
    def confidence(self) -> float:
        return 1.0 - self.alpha

    @property
    def decided_by(self) -> str:
        """The deciding procedure in words (``paired t``), as the gate's report names it."""
        return PROCEDURE_NAMES.get(self.procedure, self.procedure)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _run_of(run: RunLike | HasRun) -> RunLike:
    return run.result if isinstance(run, HasRun) else run


def paired_test(
    a: RunLike | HasRun,
    b: RunLike | HasRun,
    metric: str,
    *,
    alpha: float = 0.05,
    method: str | None = None,
    n_resamples: int = 10_000,
    seed: SeedLike = 42,
    clusters: ClusterLabels | str | None = None,
) -> PairedTestResult:
    """Did ``metric`` change from ``b`` to ``a``?  The gate's answer, with Δ = a − b.

    ``a`` and ``b`` are what :func:`evalkit.paired_bootstrap` takes (a
    :class:`~evalkit.RunResult`, rows with ``.query_id`` and ``.metrics``) or run
    artefacts (:func:`evalkit.read_artifact`); cases are paired by id and both sides
    must cover the same ones.  ``method`` is a checks file's: ``None`` or ``"auto"``
    (the default: paired t), ``"t"``, ``"bootstrap"`` or ``"permutation"``;
    ``n_resamples`` and ``seed`` matter only to the two resampling methods.

    ``clusters``: cases that share a document, a conversation or a template move
    together; name each case's cluster (a mapping of case id to cluster) or the field
    that does (``"metadata.doc_id"``: the assignment a run artefact recorded, or the
    field in the rows' ``meta``), and the inference is by cluster
    (:mod:`evalkit.stats.clustered_decide`).  A case without one is its own cluster.
    """
    checked_alpha(alpha)
    asked = DEFAULT_GATE_METHOD if method is None else method
    labels = cluster_labels(clusters, a, b) if isinstance(clusters, str) else clusters
    evaluator, paired = evaluator_by_cluster(
        _run_of(a),
        _run_of(b),
        metric,
        clusters=labels,
        method=asked,
        n_resamples=n_resamples,
        seed=resolve_seed(seed),
    )
    decision = evaluator.decide(float(alpha))
    clustering = evaluator.clustering if isinstance(evaluator, ClusteredEvaluator) else None
    return PairedTestResult(
        metric=metric,
        observed=decision.estimate,
        ci_low=decision.low,
        ci_high=decision.high,
        p_value=decision.p_value,
        significant=decision.excludes_null,
        procedure=decision.procedure,
        alpha=float(alpha),
        n=len(paired.ids),
        method=str(asked),
        clusters=None if clustering is None else clustering.count,
        own_clusters=None if clustering is None else clustering.own,
    )
