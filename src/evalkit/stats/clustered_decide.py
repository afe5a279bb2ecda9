"""Choosing the procedure a verdict is decided by: :func:`evaluator_by_cluster`, with the
cases' clusters (issue 46) each ``method`` running its clustered counterpart
(:mod:`evalkit.stats.clustered`; the table in docs/design/code-notes.md), with the interval
and its dual p from one computation.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from evalkit._model.registry import get_metric
from evalkit._util.arrays import FloatArray
from evalkit.errors import InputError
from evalkit.stats.aggregates import GenericAggregate
from evalkit.stats.clustered import (
    BOOTSTRAP_CLUSTERS,
    BOOTSTRAP_CLUSTERS_TEXT,
    FEW_CLUSTERS,
    FEW_CLUSTERS_TEXT,
    Clustering,
    ClusterT,
    cluster_bootstrap_means,
    refuse_too_few,
)
from evalkit.stats.compare import single_metric_resamples
from evalkit.stats.names import GATE_METHODS, checked
from evalkit.stats.outcome import StatWarning
from evalkit.stats.pairing import RunLike, pair_runs
from evalkit.stats.procedures import (
    DEFAULT_GATE_METHOD,
    DEFAULT_PROCEDURE,
    Decision,
    Evaluator,
    PairedData,
    Procedure,
    paired_data,
    refuse_aggregate,
    refuse_unbounded,
)
from evalkit.stats.sign_flips import SignFlipNull, SignFlips
from evalkit.stats.stream import (
    DEFAULT_CHUNK_BYTES,
    PURPOSE_CLUSTER_BOOTSTRAP,
    PURPOSE_CLUSTER_PERMUTATION,
    PURPOSE_PERMUTATION,
    substream,
)
from evalkit.stats.tdist import t_quantile

#: Each case's cluster by case id; a case it does not name (or names None) is its own.
ClusterLabels = Mapping[str, str | None]


def clustering_of(ids: tuple[str, ...] | list[str], clusters: ClusterLabels) -> Clustering:
    """The clustering of the paired cases ``ids`` (in the procedures' sorted id order)."""
    return Clustering.of([clusters.get(case_id) for case_id in ids])


class ClusteredEvaluator(Evaluator):
    """:class:`~evalkit.stats.procedures.Evaluator` by cluster: the same ``decide``."""

    def __init__(
        self,
        procedure: Procedure,
        estimate: float,
        clustering: Clustering,
        *,
        diffs: FloatArray | None = None,
        resampled: FloatArray | None = None,
        flips: SignFlips | None = None,
    ) -> None:
        super().__init__(procedure, estimate, resampled=resampled)
        self.clustering = clustering
        totals = clustering.totals(diffs) if diffs is not None else None
        self._t = ClusterT.of(totals, clustering.sizes) if totals is not None else None
        self._null = (
            SignFlipNull.of(totals, flips, clustering.sizes)
            if totals is not None and flips is not None
            else None
        )

    def _t_raw(self, alpha: float, null: float) -> tuple[float, float, float]:
        assert self._t is not None
        low, high = self._t.bounds(alpha)
        return float(low[0]), float(high[0]), float(self._t.p(null)[0])

    def decide(self, alpha: float, null: float = 0.0) -> Decision:
        refuse_too_few(self.clustering, alpha, "clustered comparison")
        return super().decide(alpha, null)

    def detectable(self, alpha: float, power: float = 0.8) -> float | None:
        """The change the cluster-robust t finds with probability ``power`` at two-sided
        ``alpha``: (t(1 − α/2, df) + t(power, df))·se, with the clusters' se and df
        (None on the resampling paths, and where the differences do not vary)."""
        if self._t is None or float(self._t.se[0]) == 0.0:
            return None
        df = self._t.df
        factor = t_quantile(1.0 - alpha / 2.0, df) + t_quantile(power, df)
        return factor * float(self._t.se[0])


def _aggregate_resamples(
    a: RunLike,
    b: RunLike,
    metric: str,
    clustering: Clustering,
    n_resamples: int,
    gen: np.random.Generator,
) -> FloatArray:
    """Δ of a whole-run aggregate over ``n_resamples`` cluster resamples: each draws G
    clusters with replacement and recomputes the aggregate on both sides' rows of the
    drawn clusters' cases (the registered function, so any aggregate's own rules hold)."""
    paired = pair_runs(a, b)
    aggregate = GenericAggregate(
        metric,
        get_metric(metric).fn,
        paired.rows_a,
        paired.rows_b,
        (paired.name_a, paired.name_b),
    )
    order = np.argsort(clustering.codes, kind="stable")
    members = np.split(order, np.cumsum(clustering.sizes)[:-1])
    g = clustering.count
    counts = gen.multinomial(g, np.full(g, 1.0 / g), size=n_resamples)
    out = np.empty(n_resamples)
    for r in range(n_resamples):
        drawn = np.repeat(np.arange(g), counts[r])
        positions = np.concatenate([members[c] for c in drawn.tolist()])
        out[r] = float(aggregate.bootstrap(positions[None, :])[0])
    return out


def evaluator_by_cluster(
    a: RunLike,
    b: RunLike,
    metric: str,
    *,
    clusters: ClusterLabels | None = None,
    method: object = DEFAULT_GATE_METHOD,
    n_resamples: int = 10_000,
    seed: int = 42,
    refuse_maximum: bool = True,
) -> tuple[Evaluator, PairedData]:
    """The procedure ``method`` runs for ``metric`` of ``a`` against ``b``, ready to decide,
    by cluster when ``clusters`` is given: one owner for the gate, ``evalkit compare`` and
    ``paired_test``.  ``refuse_maximum``: raise (:func:`refuse_unbounded`) rather than
    decide a percentile aggregate that is each run's maximum (``compare``, which only
    describes, passes False and keeps the ``aggregate_small_n`` warning)."""
    asked = checked(method, GATE_METHODS, "method")
    paired, data = paired_data(a, b, metric)
    clustering = None if clusters is None else clustering_of(paired.ids, clusters)
    if clustering is not None and clustering.count < 2:
        raise InputError(
            f"{metric!r}: the {len(paired.ids)} paired cases are all in one cluster; a "
            "clustered comparison needs at least 2 clusters"
        )
    if paired.diffs is None:
        if refuse_maximum:
            refuse_unbounded(data.aggregate, metric)
        fix = "" if clustering is None else " (with clusters: whole clusters resampled)"
        refuse_aggregate(asked, metric, fix)
    n = len(paired.ids)
    if clustering is None:
        if paired.diffs is None or asked == "bootstrap":
            # the engine's own draws: the spec's interval to the last bit (a test holds them)
            resampled = single_metric_resamples(data, n, n_resamples, seed, DEFAULT_CHUNK_BYTES)
            return Evaluator("bootstrap", paired.estimate, resampled=resampled), paired
        if asked == "permutation":
            flips = SignFlips.draw(n, n_resamples, substream(seed, PURPOSE_PERMUTATION))
            return Evaluator(asked, paired.estimate, diffs=paired.diffs, flips=flips), paired
        return Evaluator(DEFAULT_PROCEDURE, paired.estimate, diffs=paired.diffs), paired
    if paired.diffs is None or asked == "bootstrap":
        gen = substream(seed, PURPOSE_CLUSTER_BOOTSTRAP)
        if paired.diffs is None:
            resampled = _aggregate_resamples(a, b, metric, clustering, n_resamples, gen)
        else:
            totals = clustering.totals(paired.diffs)
            resampled = cluster_bootstrap_means(totals, clustering.sizes, n_resamples, gen)[0]
        return ClusteredEvaluator(
            "cluster-bootstrap", paired.estimate, clustering, resampled=resampled
        ), paired
    if asked == "permutation":
        gen = substream(seed, PURPOSE_CLUSTER_PERMUTATION)
        flips = SignFlips.draw(clustering.count, n_resamples, gen)
        return ClusteredEvaluator(
            "cluster-permutation", paired.estimate, clustering, diffs=paired.diffs, flips=flips
        ), paired
    return ClusteredEvaluator("cluster-t", paired.estimate, clustering, diffs=paired.diffs), paired


def cluster_labels(name: str, *runs: object) -> ClusterLabels:
    """Each case's cluster under the field ``name``, read from the runs: the assignment a
    run artefact recorded for that field (``clusters:`` in evalkit.yaml), else the
    field (dotted) in the rows' ``meta``.  Raises :class:`InputError` naming the field when
    neither run carries it: declaring a cluster no case has must not mean "independent"."""
    from evalkit._model.slices import field_or_none

    recorded: list[str] = []
    for run in runs:
        goldens = getattr(run, "goldens", None)
        assignment = getattr(goldens, "clusters", None)
        if assignment is not None:
            if assignment.field_name == name:
                return dict(assignment.members)
            recorded.append(assignment.field_name)
    labels: dict[str, str | None] = {}
    for run in runs:
        rows = getattr(getattr(run, "result", run), "per_query", None)
        if rows is None and isinstance(run, list | tuple):
            rows = run
        for row in rows or ():
            value = field_or_none(getattr(row, "meta", None) or {}, name)
            if value is not None and not isinstance(value, list | tuple | dict | float):
                labels.setdefault(row.query_id, str(value))
    if not labels:
        seen = (
            f" (the runs record clusters by {', '.join(sorted(set(recorded)))})" if recorded else ""
        )
        raise InputError(
            f"no case of the runs carries the cluster field {name!r}{seen}: declare "
            f"`clusters: {name}` in evalkit.yaml and re-run, or pass a mapping of case id to "
            "cluster"
        )
    return labels


def cluster_count_text(clustering: Clustering, name: str | None) -> str:
    """ "269 cases in 36 clusters by metadata.doc_id": what every clustered report says."""
    by = f" by {name}" if name else ""
    own = f"; {clustering.own} case(s) without one, each its own cluster" if clustering.own else ""
    return f"{clustering.n} cases in {clustering.count} clusters{by}{own}"


def cluster_notes(clustering: Clustering, procedure: str = "cluster-t") -> tuple[StatWarning, ...]:
    """The warnings of a verdict decided by cluster: where its clusters are few
    (:data:`~evalkit.stats.clustered.FEW_CLUSTERS`), and where the cluster bootstrap
    decided on fewer than :data:`~evalkit.stats.clustered.BOOTSTRAP_CLUSTERS`."""
    notes = []
    if clustering.count < FEW_CLUSTERS:
        notes.append(StatWarning("few_clusters", FEW_CLUSTERS_TEXT.format(g=clustering.count)))
    if procedure == "cluster-bootstrap" and clustering.count < BOOTSTRAP_CLUSTERS:
        notes.append(
            StatWarning("few_clusters", BOOTSTRAP_CLUSTERS_TEXT.format(g=clustering.count))
        )
    return tuple(notes)
