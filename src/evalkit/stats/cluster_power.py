"""``evalkit power --cluster FIELD``: what an eval of these clusters detects (issue 46), read
from the clusters' cluster-robust t, as the verdict is (docs/design/code-notes.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evalkit.errors import InputError
from evalkit.stats.clustered import ClusterT
from evalkit.stats.clustered_decide import ClusterLabels, clustering_of
from evalkit.stats.pairing import RunLike
from evalkit.stats.power import _EFFECT_MULTIPLES, PowerRow, PowerTable, case_values
from evalkit.stats.stream import PURPOSE_POWER, RESAMPLING_STREAM, SeedLike, resolve_seed, substream
from evalkit.stats.tdist import t_cdf, t_quantile


def cluster_power_table(
    a: RunLike,
    b: RunLike,
    *,
    metric: str,
    clusters: ClusterLabels,
    effects: Sequence[float] | None = None,
    alpha: float = 0.05,
    n_sim: int = 1000,
    seed: SeedLike = 42,
    power: float = 0.8,
) -> PowerTable:
    """The power table of ``metric`` of ``a`` against ``b`` when cases come in ``clusters``."""
    paired, data = case_values(a, b, metric)
    diffs = data.a - data.b
    clustering = clustering_of(paired.ids, clusters)
    if clustering.count < 2:
        raise InputError("power by cluster needs at least 2 clusters")
    totals = clustering.totals(diffs)[0]
    sizes = clustering.sizes
    observed = ClusterT.of(totals[None, :], sizes)
    se, df = float(observed.se[0]), observed.df
    critical = t_quantile(1.0 - alpha / 2.0, df)
    mde = (critical + t_quantile(power, df)) * se
    chosen = list(effects) if effects is not None else [m * mde for m in _EFFECT_MULTIPLES]
    seed_int = resolve_seed(seed)
    centred = totals - sizes * float(totals.sum() / sizes.sum())
    rows = []
    for effect in chosen:
        shift = effect / se if se > 0 else np.inf * np.sign(effect)
        analytic = 1.0 - t_cdf(critical - shift, df) + t_cdf(-critical - shift, df)
        simulated = (
            _simulated(centred, sizes, effect, alpha, n_sim, substream(seed_int, PURPOSE_POWER))
            if n_sim
            else None
        )
        rows.append(PowerRow(float(effect), float(analytic), simulated))
    own = f"; {clustering.own} case(s) without one" if clustering.own else ""
    return PowerTable(
        n=clustering.n,
        sd_diff=float(np.std(diffs, ddof=1)),
        sd_source=(
            f"paired differences in {clustering.count} clusters{own}: cluster-robust t, "
            f"se {se:.4g}, {df:.1f} df"
        ),
        alpha=alpha,
        target_power=power,
        mde=mde,
        method="cluster-t",
        n_sim=n_sim,
        n_resamples=0,
        seed=seed_int,
        stream=RESAMPLING_STREAM,
        rows=tuple(rows),
        metric=metric,
    )


def _simulated(
    centred: np.ndarray,
    sizes: np.ndarray,
    effect: float,
    alpha: float,
    n_sim: int,
    gen: np.random.Generator,
) -> float:
    """Share of ``n_sim`` evals of G resampled clusters the cluster-robust t finds."""
    g = sizes.shape[0]
    found = 0
    for _ in range(n_sim):
        drawn = gen.integers(0, g, size=g, dtype=np.int64)
        size = sizes[drawn]
        t = ClusterT.of((centred[drawn] + effect * size)[None, :], size)
        found += int(float(t.p(0.0)[0]) <= alpha)
    return found / n_sim
