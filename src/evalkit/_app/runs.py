"""``evalkit run`` and ``evalkit merge``: a config's run to an artefact, shards to one run."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.errors import InputError

# The pipeline (and through it the gate, numpy and PyYAML) is imported by the functions
# that run a target: `evalkit run --trec-run` builds a RunAsk and runs none.
if TYPE_CHECKING:
    from evalkit._app.pipeline import RunOutcome, RunStart
    from evalkit._engine.execute import RowCallback
    from evalkit._spec.artifact import RunArtifact
    from evalkit._spec.case_filter import CaseFilter


@dataclass(frozen=True)
class RunAsk:
    """What ``evalkit run`` was asked: the config, its overrides and where the run goes."""

    config: Path
    out: Path | None = None
    concurrency: int | None = None
    rate_limit: float | None = None
    case_timeout: float | None = None
    resume: bool = False
    shard: str | None = None  # "i/N"
    cache_only: bool = False
    allow_failed: bool = False
    cases: CaseFilter | None = None  # -k/--case


@dataclass(frozen=True)
class RunDone:
    """A finished ``evalkit run``: where everything went, and how many cases the eval has."""

    outcome: RunOutcome
    golden_cases: int  # in the whole golden set (a subset run names how many it kept)


def run_config(
    ask: RunAsk,
    *,
    on_start: Callable[[RunStart, str], None] | None = None,
    on_row: RowCallback | None = None,
) -> RunDone:
    """Run the config's target over its golden set (checkpointed) and write the artefact."""
    from evalkit._app.pipeline import config_inputs, prepare, run_output_path, run_to_artifact
    from evalkit._engine.shards import parse_shard
    from evalkit._spec.config import load_config
    from evalkit._util.paths import refuse_overwriting_inputs

    spec = parse_shard(ask.shard) if ask.shard is not None else None
    for flag, value in (("--rate-limit", ask.rate_limit), ("--case-timeout", ask.case_timeout)):
        if value is not None and not (math.isfinite(value) and value > 0):
            raise InputError(f"{flag} must be a positive number, got {value:g}")
    cfg = load_config(ask.config)
    overrides = {
        key: value
        for key, value in (
            ("concurrency", ask.concurrency),
            ("rate_limit", ask.rate_limit),
            ("case_timeout_s", ask.case_timeout),
        )
        if value is not None
    }
    if overrides:
        cfg.model = cfg.model.model_copy(update=overrides)
    prepared = prepare(cfg, cache_only=ask.cache_only)
    out_flag = "--out" if ask.out is not None else f"output ({prepared.config.path})"
    refuse_overwriting_inputs(
        {out_flag: run_output_path(prepared.config, ask.out, spec, ask.cases)},
        config_inputs(prepared.config),
    )
    name = prepared.config.name
    outcome = run_to_artifact(
        prepared,
        ask.out,
        shard=spec,
        resume=ask.resume,
        allow_failed=ask.allow_failed,
        on_start=None if on_start is None else (lambda plan: on_start(plan, name)),
        on_row=on_row,
        cases=ask.cases,
    )
    return RunDone(outcome, len(prepared.goldens))


def merge_shard_files(
    shards: Sequence[Path], out: Path, *, allow_failed: bool = False
) -> tuple[RunArtifact, Path]:
    """Merge the artefacts of a sharded run and write the whole run: the run and its path."""
    from evalkit._app.pipeline import write_run
    from evalkit._engine.shards import merge
    from evalkit._spec.artifact import read_artifact
    from evalkit._util.atomic import check_writable
    from evalkit._util.paths import refuse_overwriting_inputs

    check_writable(out)
    refuse_overwriting_inputs({"--out": out}, {f"shard artefact {path}": path for path in shards})
    artefacts = [read_artifact(path) for path in shards]
    merged = merge(artefacts, sources=[str(path) for path in shards])
    return merged, write_run(merged, out, allow_failed=allow_failed)
