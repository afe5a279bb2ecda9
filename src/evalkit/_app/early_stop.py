"""``stop_early:``: run the gate's cases in a seeded random order and stop when settled.

How the order, the batches, the looks and the budgets work: docs/design/code-notes.md.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from evalkit._model.results import CaseResult, RunResult
from evalkit._spec.case_filter import Subset
from evalkit.errors import InputError

if TYPE_CHECKING:
    from evalkit._app.pipeline import GateAsk, Prepared
    from evalkit._spec.artifact import RunArtifact
    from evalkit._spec.config import LoadedConfig, StopEarlyConfig
    from evalkit.gate.model import StoppedEarly


SETTLED = "every check settled (anytime-valid)"


@dataclass(frozen=True)
class EarlyRun:
    """What ran: the rows in golden-file order, the cases run, and why it stopped."""

    result: RunResult[CaseResult]
    stopped: StoppedEarly | None  # None: every case ran
    subset: Subset  # the cases run, to decide on (every case when none was skipped)


def case_units(
    ids: Sequence[str], seed: int, clusters: Mapping[str, str | None] | None = None
) -> list[tuple[str, ...]]:
    """The seeded random order the cases run in, as units: one case each, or whole clusters
    (a case without a cluster is one of its own).  The same for the same ids and seed."""
    if clusters is None:
        units: list[tuple[str, ...]] = [(case_id,) for case_id in ids]
    else:
        members: dict[object, list[str]] = {}
        for case_id in ids:
            label = clusters.get(case_id)
            members.setdefault(("own", case_id) if label is None else label, []).append(case_id)
        units = [tuple(cases) for cases in members.values()]
    rng = np.random.default_rng([seed, len(units)])
    return [units[i] for i in rng.permutation(len(units))]


def batches_of(units: Sequence[tuple[str, ...]], batch: int, planned: int) -> list[list[str]]:
    """Whole units, ``batch`` cases a batch (a cluster is never cut), up to ``planned``."""
    out: list[list[str]] = []
    current: list[str] = []
    total = 0
    for unit in units:
        if total >= planned:
            break
        current.extend(unit)
        total += len(unit)
        if len(current) >= batch or total >= planned:
            out.append(current)
            current = []
    if current:
        out.append(current)
    return out


def _cost(rows: Sequence[CaseResult]) -> float | None:
    """Money the rows report in their meta (``*cost_usd``: judge and target), or None when
    no row says; a cached grade is $0, known as such unless a grade was paid unpriced."""
    total = 0.0
    priced = cached = unpriced = False
    for row in rows:
        meta = row.response.meta if row.response is not None else {}
        for key, value in meta.items():
            if key.endswith("cost_usd") and isinstance(value, int | float) and math.isfinite(value):
                total += float(value)
                priced = True
            elif key.endswith("_cached"):
                cached = cached or value is True
                unpriced = unpriced or (value is False and f"{key[:-7]}_cost_usd" not in meta)
    return total if priced or (cached and not unpriced) else None


def _budget_spent(
    settings: StopEarlyConfig, n_run: int, cost: float | None, elapsed: float
) -> str | None:
    if settings.max_cases is not None and n_run >= settings.max_cases:
        return f"budget max_cases {settings.max_cases:,} reached before every check settled"
    if settings.max_cost_usd is not None and cost is not None and cost >= settings.max_cost_usd:
        return f"budget max_cost_usd ${settings.max_cost_usd:,.2f} spent before every check settled"
    if settings.max_seconds is not None and elapsed >= settings.max_seconds:
        return f"budget max_seconds {settings.max_seconds:g} s spent before every check settled"
    return None


def run_stopping_early(
    prepared: Prepared,
    baseline: RunArtifact | None,
    settings: StopEarlyConfig,
    run_batch: Callable[[Prepared], RunResult[CaseResult]],
    to_artifact: Callable[[Prepared, RunResult[CaseResult]], RunArtifact],
) -> EarlyRun:
    """Run ``prepared`` batch by batch in the seeded order until settled or out of budget.

    ``run_batch`` runs a prepared eval of some cases (the pipeline's, which keeps a
    checkpoint), ``to_artifact`` makes the partial run an artefact for the checks to read.
    """
    from evalkit.gate.sequential import refuse_unsupported, settle_checks

    checks = list(prepared.checks.checks)
    refuse_unsupported(checks, prepared.checks.correction)
    ids = prepared.goldens.ids()
    seed = settings.seed if settings.seed is not None else prepared.config.model.seed
    assignment = prepared.goldens.cluster_assignment()
    clusters = None if assignment is None else dict(assignment.members)
    units = case_units(ids, seed, clusters)
    order = [case_id for unit in units for case_id in unit]
    planned = len(order) if settings.max_cases is None else min(len(order), settings.max_cases)
    batches = batches_of(units, settings.batch, planned)
    blocking = [c for c in checks if c.is_blocking]
    started = time.monotonic()
    rows: dict[str, CaseResult] = {}
    ends: list[int] = []
    stopped: tuple[str, bool, tuple[str, ...]] | None = None
    for batch in batches:
        part = replace(prepared, goldens=prepared.goldens.subset(set(batch)))
        rows.update((row.case_id, row) for row in run_batch(part).per_query)
        ends.append((ends[-1] if ends else 0) + len(batch))
        run_ids = order[: ends[-1]]
        if any(rows[i].error is not None for i in run_ids):
            stopped = ("a case failed to run", False, ())
            break
        if not blocking or ends[-1] >= len(order):
            continue
        partial = to_artifact(
            replace(prepared, goldens=prepared.goldens.subset(set(run_ids))),
            RunResult(prepared.config.name, [rows[i] for i in run_ids]),
        )
        states = settle_checks(
            blocking,
            partial,
            baseline,
            run_ids,
            planned=planned,
            batch_ends=ends,
            clusters=clusters,
        )
        open_ids = tuple(s.check_id for s in states if s.outcome is None)
        if not open_ids:
            stopped = (SETTLED, True, ())
            break
        spent = _budget_spent(
            settings, ends[-1], _cost(list(rows.values())), time.monotonic() - started
        )
        if spent is not None:
            stopped = (spent, False, open_ids)
            break
    run_ids = order[: ends[-1] if ends else 0]
    if stopped is None and len(run_ids) < len(ids):  # max_cases ran out with nothing looked at
        spent = _budget_spent(settings, len(run_ids), None, 0.0) or "budget reached"
        stopped = (spent, False, tuple(c.id for c in blocking))
    kept = set(run_ids)
    result = RunResult(prepared.config.name, [rows[c.id] for c in prepared.goldens if c.id in kept])
    subset = Subset(
        "stopped early", tuple(c.id for c in prepared.goldens if c.id in kept), len(ids)
    )
    if stopped is None or len(run_ids) == len(ids):
        return EarlyRun(result, None, subset)
    return EarlyRun(result, _stopped(stopped, rows, run_ids, len(ids)), subset)


def _stopped(
    why: tuple[str, bool, tuple[str, ...]],
    rows: dict[str, CaseResult],
    run_ids: Sequence[str],
    total: int,
) -> StoppedEarly:
    from evalkit.gate.model import StoppedEarly

    reason, settled, undecided = why
    cost = _cost([rows[i] for i in run_ids])
    estimate = None if cost is None else cost / len(run_ids) * total
    return StoppedEarly(
        cases_run=len(run_ids),
        cases_total=total,
        reason=reason,
        settled=settled,
        cost_usd=cost,
        cost_usd_estimated_full=estimate,
        undecided=undecided,
    )


def settings_in_force(config: LoadedConfig, ask: GateAsk) -> StopEarlyConfig | None:
    """The ``stop_early:`` settings a gate runs with (None: every case runs)."""
    from evalkit._spec.config import StopEarlyConfig

    block = config.model.stop_early
    if ask.stop_early and ask.candidate is not None:
        raise InputError(
            f"--stop-early runs the target in batches; with --candidate {ask.candidate} "
            "nothing is run: drop one of them"
        )
    settings = block if block is not None else (StopEarlyConfig() if ask.stop_early else None)
    if ask.stop_early is False or ask.candidate is not None:
        settings = None  # turned off, or nothing runs, so nothing stops early
    if ask.resume and settings is None:
        raise InputError(
            "--resume goes on with a gate that stops early (stop_early: in evalkit.yaml, or "
            "--stop-early); a gate that runs every case: `evalkit run --resume`, then "
            "`evalkit gate --candidate`"
        )
    if settings is not None and ask.cases is not None:  # it picks its own cases
        raise InputError(
            f"stop_early: {ask.cases.describe()} picks cases, and early stopping runs a random "
            "order of the whole golden set; use --no-stop-early with -k/--case"
        )
    return settings
