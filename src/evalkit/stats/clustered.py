"""Inference on a mean paired difference when cases come in declared clusters (a case
without one is its own): the cluster-robust t (CR2, Bell-McCaffrey df) and the cluster
bootstrap (formulas: docs/clusters.md, docs/design/code-notes.md)."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from evalkit._util.arrays import BoolArray, FloatArray, IntArray
from evalkit.errors import InputError
from evalkit.stats.tails import t_p_of
from evalkit.stats.tdist import t_quantile

#: Below this many clusters a clustered verdict warns: on skewed cluster effects the
#: cluster-robust t fails falsely too often (measured: docs/clusters.md, code-notes.md).
FEW_CLUSTERS: Final = 30
FEW_CLUSTERS_TEXT: Final = (
    "only {g} clusters: the interval is trustworthy when the clusters' effects are roughly "
    "symmetric; where a change costs a few clusters a lot and helps the rest a little it "
    "failed falsely up to 11.1% one-sided against 2.5% below 30 clusters "
    "(docs/clusters.md); more clusters, not more cases per cluster, help"
)

#: Below this many clusters a verdict the cluster bootstrap decided (``method: bootstrap``,
#: and every aggregate) warns: its interval is too narrow with few clusters (measured).
BOOTSTRAP_CLUSTERS: Final = 80
BOOTSTRAP_CLUSTERS_TEXT: Final = (
    "the cluster bootstrap decided on {g} clusters: its interval is too narrow with few "
    "clusters (measured 4.3-6.1% one-sided false fails against 2.5% at 10 clusters, up "
    "to 4.7% at 50; docs/clusters.md); method 't' or 'permutation' hold their level"
)

#: Bootstrap count rows held at once, so memory never grows with B × G.
_CHUNK_ELEMENTS: Final = 2**22


@dataclass(frozen=True)
class Clustering:
    """Which cluster each case is in (cases in the caller's order, clusters numbered by
    first appearance); a case without a declared cluster is a cluster of its own."""

    codes: IntArray  # per case: its cluster, 0 .. G - 1
    sizes: IntArray  # per cluster: its number of cases
    undeclared: BoolArray  # per cluster: True for a case that declared none

    @classmethod
    def of(cls, labels: Sequence[Hashable | None]) -> Clustering:
        """The clustering of per-case labels; ``None`` makes a case its own cluster."""
        number: dict[tuple[bool, Hashable], int] = {}
        codes = np.empty(len(labels), dtype=np.int64)
        for i, label in enumerate(labels):
            key = (True, i) if label is None else (False, label)
            codes[i] = number.setdefault(key, len(number))
        sizes = np.bincount(codes, minlength=len(number)).astype(np.int64)
        undeclared = np.array([own for own, _ in number], dtype=np.bool_)
        return cls(codes, sizes, undeclared)

    @property
    def n(self) -> int:
        return int(self.codes.shape[0])

    @property
    def count(self) -> int:
        """G, the number of clusters."""
        return int(self.sizes.shape[0])

    @property
    def own(self) -> int:
        """Cases without a declared cluster (each its own)."""
        return int(np.count_nonzero(self.undeclared))

    def totals(self, values: FloatArray) -> FloatArray:
        """Per row of ``values`` (rows × n), each cluster's total (rows × G)."""
        rows = np.atleast_2d(np.asarray(values, dtype=np.float64))
        out = np.zeros((rows.shape[0], self.count))
        for r in range(rows.shape[0]):
            out[r] = np.bincount(self.codes, weights=rows[r], minlength=self.count)
        return out


def clusters_needed(alpha: float) -> int:
    """The fewest clusters at which flipping whole clusters can reach a two-sided p of
    ``alpha`` (2/2^G ≤ α): below it no test valid for every symmetric distribution of
    the clusters' effects can ever reject, so a comparison there is refused."""
    return max(2, math.ceil(math.log2(2.0 / alpha) - 1e-12))


def refuse_too_few(clustering: Clustering, alpha: float, what: str) -> None:
    """Raise :class:`InputError` when ``clustering`` has too few clusters for any valid
    answer at level ``alpha`` (see :func:`clusters_needed`)."""
    needed = clusters_needed(alpha)
    if clustering.count < needed:
        raise InputError(
            f"{what}: {clustering.n} cases in {clustering.count} cluster"
            f"{'' if clustering.count == 1 else 's'}; with fewer than {needed} clusters no "
            f"test that holds for any cluster effects can reach p <= {alpha:g} (flipping "
            f"whole clusters gives at best p = {2.0 / 2**clustering.count:.3g}): add clusters "
            f"(at least {needed}) or declare none if the cases are independent"
        )


# ----------------------------------------------------------------------------- CR2 t


@dataclass(frozen=True)
class ClusterT:
    """Per row: the mean difference and its CR2 standard error; the design's BM df."""

    mean: FloatArray
    se: FloatArray
    df: float

    @classmethod
    def of(cls, totals: FloatArray, sizes: IntArray) -> ClusterT:
        """From cluster totals (rows × G) and cluster sizes (G >= 2, as every caller checks)."""
        s = np.atleast_2d(np.asarray(totals, dtype=np.float64))
        size = np.asarray(sizes, dtype=np.float64)
        n = float(size.sum())
        mean = s.sum(axis=1) / n
        residual = s - size[None, :] * mean[:, None]
        inflate = 1.0 / (1.0 - size / n)
        var = (residual * residual * inflate[None, :]).sum(axis=1) / (n * n)
        return cls(mean, np.sqrt(var), bell_mccaffrey_df(sizes))

    def bounds(self, alpha: float) -> tuple[FloatArray, FloatArray]:
        half = t_quantile(1.0 - alpha / 2.0, self.df) * self.se
        return self.mean - half, self.mean + half

    def p(self, null: float) -> FloatArray:
        """Two-sided p of H0: mean difference = ``null``, per row."""
        return t_p_of(self.mean, self.se, self.df, null)


def bell_mccaffrey_df(sizes: IntArray) -> float:
    """Satterthwaite degrees of freedom of the CR2 variance of a mean under working
    independence (Bell and McCaffrey's), in O(G) (the derivation: docs/design/code-notes.md)."""
    size = np.asarray(sizes, dtype=np.float64)
    n = float(size.sum())
    b = size / (n * n * (1.0 - size / n))
    c = size * b
    denominator = float((b * b).sum() - 2.0 / n * (b * c).sum() + c.sum() ** 2 / (n * n))
    return 1.0 / (n * n) / denominator


# ----------------------------------------------------------------------------- bootstrap


def cluster_bootstrap_means(
    totals: FloatArray, sizes: IntArray, n_resamples: int, gen: np.random.Generator
) -> FloatArray:
    """Per row of cluster totals, ``n_resamples`` means over the cases of G clusters drawn
    with replacement (one ``multinomial(G, 1/G)`` row of counts per resample, shared by
    every row): Σ counts·totals over Σ counts·sizes."""
    s = np.atleast_2d(np.asarray(totals, dtype=np.float64))
    size = np.asarray(sizes, dtype=np.float64)
    g = size.shape[0]
    out = np.empty((s.shape[0], n_resamples))
    step = max(1, _CHUNK_ELEMENTS // max(1, g))
    probabilities = np.full(g, 1.0 / g)
    for start in range(0, n_resamples, step):
        count = min(step, n_resamples - start)
        counts = gen.multinomial(g, probabilities, size=count).astype(np.float64)
        out[:, start : start + count] = (s @ counts.T) / (counts @ size)[None, :]
    return out
