"""Runs for the drift-check tests: artefacts from per-case values, and simulated histories.

:func:`exact_history` builds promotions whose statistics are known *exactly* (truth by
construction, not by re-deriving the gate): every run is ``μ + e_r − r·δ`` with the
noise vectors ``e_r`` mutually orthogonal, of equal length and antisymmetric over pairs
of cases.  So any two runs' per-case differences have mean exactly ``−(j − i)·δ``,
sample SD exactly ``σ_d`` and skewness exactly 0: each step's t statistic is exactly
``−δ√n/σ_d`` and the drift after k steps exactly k times that.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from evalkit import CaseResult, RunResult, TargetResponse
from evalkit._spec.artifact import GoldensInfo, RunArtifact, build_artifact

METRIC = "ndcg@10"  # higher is better; the values are injected, not computed
Values = dict[str, float]


def case_ids(n: int) -> list[str]:
    return [f"q{i:04d}" for i in range(n)]


def run(
    name: str,
    values: Mapping[str, float],
    *,
    changed: Sequence[str] = (),
    errors: Mapping[str, str] | None = None,
    sha: str = "deadbeef",
    config_name: str | None = None,
) -> RunArtifact:
    """An artefact with one row per case; ``changed`` cases get another golden fingerprint."""
    rows = [
        CaseResult(cid, TargetResponse([cid], latency_ms=10.0), {METRIC: float(v)})
        for cid, v in values.items()
    ]
    rows += [CaseResult(cid, None, {}, error=err) for cid, err in (errors or {}).items()]
    moved = set(changed)
    ids = [*values, *(errors or {})]
    fps = {cid: f"fp-{cid}" + ("-v2" if cid in moved else "") for cid in ids}
    art = build_artifact(
        RunResult(name, rows), [METRIC], goldens=GoldensInfo("set", fps), git=(sha, False), seed=1
    )
    if config_name is not None:
        from dataclasses import replace

        art = replace(art, config_name=config_name)
    return art


def exact_history(n: int, steps: int, loss: float, sd_d: float, seed: int) -> list[Values]:
    """``steps + 1`` runs (run 0 is the reference); each step loses exactly ``loss``.

    Every pair of runs has per-case differences of sample SD exactly ``sd_d``.
    """
    if n % 2 or n // 2 < steps + 1:
        raise ValueError("n must be even and at least 2·(steps + 1)")
    rng = np.random.default_rng(seed)
    half, k = n // 2, steps + 1
    q, _ = np.linalg.qr(rng.standard_normal((half, k)))  # orthonormal columns
    noise = np.vstack([q, -q])  # antisymmetric over (i, i + n/2): mean 0, odd moments 0
    # ||e_i − e_j||² = 2·s²·2 (each column has squared norm 2 after stacking), and the
    # sample variance divides by n − 1.
    s = sd_d * np.sqrt((n - 1) / 4.0)
    base = rng.uniform(0.3, 0.7, size=half)
    mu = np.concatenate([base, base])
    ids = case_ids(n)
    return [
        dict(zip(ids, (mu + s * noise[:, r] - r * loss).tolist(), strict=True)) for r in range(k)
    ]


def random_history(
    n: int, steps: int, loss: float, sd_e: float, rng: np.random.Generator
) -> list[Values]:
    """``steps + 1`` runs with fresh noise each (so σ_d = sd_e·√2); each step loses ``loss``."""
    mu = rng.uniform(0.3, 0.7, size=n)
    ids = case_ids(n)
    return [
        dict(zip(ids, (mu + rng.normal(0.0, sd_e, size=n) - r * loss).tolist(), strict=True))
        for r in range(steps + 1)
    ]
