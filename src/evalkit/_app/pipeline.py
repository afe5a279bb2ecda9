"""From ``evalkit.yaml`` to a run, an artefact and a gate report.

The CLI and the GitHub Action are thin shells over these functions.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit._app.provenance import git_state
from evalkit._engine.execute import RowCallback
from evalkit._engine.trials import TrialCallback, evaluate_repeated
from evalkit._model.clusters import ClusterAssignment
from evalkit._model.golden_cases import GoldenSet
from evalkit._model.registry import resolve_metrics
from evalkit._model.results import CaseResult, RunResult
from evalkit._spec.artifact import (
    GoldensInfo,
    RunArtifact,
    artifact_bytes,
    build_artifact,
    read_artifact,
    vouch_schema1_fingerprints,
    with_infix,
    write_artifact,
)
from evalkit._spec.config import WIRE_SETTINGS, LoadedConfig, StopEarlyConfig, expand_env
from evalkit._spec.metric_entries import register_declared_metrics
from evalkit._spec.slices import declare_clusters, declare_slices, resolve_slice_checks
from evalkit._util.atomic import write_bytes_atomic
from evalkit._util.log import get_logger
from evalkit._util.suggest import did_you_mean
from evalkit._util.text import decode_utf8
from evalkit.errors import ConfigError, EvalkitError, InputError
from evalkit.targets.base import Target

# The gate (and its numpy statistics) is imported by the gate command alone, not by a run.
if TYPE_CHECKING:
    from evalkit._app.early_stop import EarlyRun
    from evalkit._engine.checkpoint import Checkpoint
    from evalkit._engine.shards import ShardSpec
    from evalkit._spec.case_filter import CaseFilter, Subset
    from evalkit._spec.checks import ChecksFile, CheckSpec
    from evalkit._store.protocol import BaselineStore
    from evalkit.gate.model import GateReport
    from evalkit.gate.reference import Reference
    from evalkit.gate.trend import DriftTrend

_log = get_logger(__name__)


def import_plugins(config: LoadedConfig) -> None:
    """Put the config's python_path on sys.path and import its plugin modules."""
    for entry in config.model.python_path:
        resolved = config.resolve(entry).resolve()
        if not resolved.is_dir():
            raise ConfigError(
                f"{config.path}: python_path entry {entry!r} ({resolved}) is not a folder; "
                "fix the path or remove the entry"
            )
        folder = str(resolved)
        if folder not in sys.path:
            sys.path.insert(0, folder)
    for module in config.model.plugins:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise ConfigError(
                f"{config.path}: plugin {module!r} cannot be imported ({exc}); "
                "check the module name and python_path"
            ) from None


def register_judges(config: LoadedConfig, *, cache_only: bool = False) -> None:
    """Register each configured LLM judge as a per-case metric."""
    if not config.model.judge:
        return
    from evalkit._model.registry import register_metric
    from evalkit._util.bounded import read_bytes
    from evalkit.metrics.judge_providers import build_judge

    for index, judge in enumerate(config.model.judge):
        if cache_only and judge.cache_path and not config.resolve(judge.cache_path).exists():
            # Every grade would miss: refuse before the target is called even once.
            raise ConfigError(
                f"{config.where('judge', index, 'cache_path')}: --judge-cache-only, but the "
                f"judge cache {config.resolve(judge.cache_path)} does not exist; run once "
                "without --judge-cache-only to record it, or fix cache_path"
            )
        if judge.rubric_file is not None:
            rubric_path = config.resolve(judge.rubric_file)
            try:
                raw = read_bytes(rubric_path)
            except OSError as exc:
                raise ConfigError(
                    f"{config.path}: judge rubric_file {rubric_path}: {exc.strerror or exc}"
                ) from None
            rubric = decode_utf8(raw, str(rubric_path), ConfigError)
        else:
            rubric = judge.rubric or ""
        cache = config.resolve(judge.cache_path) if judge.cache_path else None
        grader = build_judge(
            judge.provider,
            rubric=rubric,
            model=judge.model,
            scale=judge.scale,
            cache_path=cache,
            cache_only=cache_only,
            prices=judge.prices,
            wire={key: getattr(judge, key) for key in WIRE_SETTINGS},
        )
        register_metric(
            judge.metric, higher_is_better=judge.higher_is_better, bounds=(1, judge.scale)
        )(grader)


def build_target(config: LoadedConfig, env: Mapping[str, str] | None = None) -> Target:
    """The configured target: a python factory's product or a declarative HTTP target."""
    tc = config.model.target
    environ = os.environ if env is None else env
    if tc.http is not None:
        from evalkit.targets.http import HttpTarget
        from evalkit.targets.http_template import jmespath_extract, render_payload

        http = tc.http
        url = expand_env(http.url, environ, "target.http.url")
        headers = expand_env(http.headers, environ, "target.http.headers")
        payload_template = expand_env(http.payload, environ, "target.http.payload")
        return HttpTarget(
            url=url,
            name=tc.name or config.name,
            build_payload=lambda case: render_payload(payload_template, case),
            extract=jmespath_extract(http.extract),
            headers=headers,
            timeout_s=http.timeout_s,
            meta_keys=tuple(http.meta_keys),
            method=http.method,
            rate_limit_wait_s=http.rate_limit_wait_s,
        )
    assert tc.python is not None
    module_name, _, attr = tc.python.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(
            f"{config.path}: target.python: cannot import {module_name!r} ({exc}); "
            "check python_path and the module name"
        ) from None
    factory: Any = module
    for part in attr.split("."):
        factory = getattr(factory, part, None)
        if factory is None:
            raise ConfigError(f"{config.path}: target.python: {module_name!r} has no {attr!r}")
    try:
        made = factory(**tc.args)
    except EvalkitError:
        raise
    except Exception as exc:
        raise ConfigError(
            f"{config.path}: target.python: {tc.python}() raised {type(exc).__name__}: {exc}"
        ) from None
    if not hasattr(made, "invoke") and callable(made):
        from evalkit.targets.callable import CallableTarget

        made = CallableTarget(made, name=tc.name or config.name)
    if not hasattr(made, "invoke") or not hasattr(made, "name"):
        raise ConfigError(
            f"{config.path}: target.python: {tc.python}() returned {type(made).__name__}, "
            "not a Target (an object with .name and .invoke(case)) or a callable"
        )
    return made  # type: ignore[no-any-return]


@dataclass
class Prepared:
    """Everything loaded and validated before any case is run."""

    config: LoadedConfig
    goldens: GoldenSet
    checks: ChecksFile


def prepare(config: LoadedConfig, *, cache_only: bool = False) -> Prepared:
    """Load plugins, judges, goldens and checks, and cross-validate them.

    ``cache_only`` is process-wide: it holds for every judge, including ones a
    plugin registers itself (:mod:`evalkit.metrics.judge_guard`).
    """
    from evalkit._spec.checks import load_checks_file
    from evalkit._spec.golden_loaders import load_goldens
    from evalkit.metrics.judge_guard import set_cache_only

    set_cache_only(cache_only)
    import_plugins(config)
    register_judges(config, cache_only=cache_only)
    register_declared_metrics(
        config.model.metrics, config.resolve, lambda index: config.where("metrics", index)
    )
    goldens = load_goldens(config.resolve(config.model.goldens))
    goldens = declare_slices(goldens, config.model.slices.by, config.where("slices"))
    goldens = declare_clusters(goldens, config.model.clusters, config.where("clusters"))
    if config.model.judge:  # the judge-human agreement aggregates, for each judge
        from evalkit.metrics.judge_agreement import register_judge_agreement

        register_judge_agreement(
            _judges(config), goldens, config.model.metrics, where=str(config.path)
        )
    checks = load_checks_file(config.resolve(config.model.checks), known_case_ids=goldens.ids())
    checks = resolve_slice_checks(checks, goldens, str(config.path))
    for index, name in enumerate(config.model.metrics):
        try:
            resolve_metrics([name])
        except InputError as exc:
            raise ConfigError(f"{config.where('metrics', index)}: metrics: {exc}") from None
    computed = set(config.model.metrics)
    for spec in checks.checks:
        if spec.metric not in computed:
            # a near name among the computed ones is most often a typo in the checks file
            hint = did_you_mean(spec.metric, config.model.metrics)
            fix = "correct the name or add it there" if hint else "add it there"
            raise ConfigError(
                f"{spec.source or config.path}: check {spec.id!r} names metric "
                f"{spec.metric!r}{hint}, which {config.path} does not compute (metrics: "
                f"{', '.join(config.model.metrics)}); {fix}"
            )
    return Prepared(config, goldens, checks)


def _judges(config: LoadedConfig) -> list[tuple[str, int]]:
    return [(judge.metric, judge.scale) for judge in config.model.judge]


def goldens_info(goldens: GoldenSet) -> GoldensInfo:
    per_case = goldens.case_fingerprints()
    return GoldensInfo(
        goldens.fingerprint(), per_case, goldens.slice_assignment(), goldens.cluster_assignment()
    )


def run_candidate(
    prepared: Prepared,
    *,
    target: Target | None = None,
    on_row: RowCallback | None = None,
    skip: Sequence[str] = (),
    concurrency: int | None = None,
    on_trial: TrialCallback | None = None,
    done_trials: Mapping[str, Mapping[int, CaseResult]] | None = None,
) -> RunResult[CaseResult]:
    """Run the prepared eval (``repeats`` trials per case: :func:`evaluate_repeated`).

    ``on_row`` sees each finished row: each trial's, when ``repeats`` > 1 (progress
    then counts cases × repeats), so it moves from the first trial on.
    """
    cfg = prepared.config.model
    if cfg.repeats > 1 and on_row is not None:
        seen, also = on_row, on_trial

        def each_trial(trial: int, index: int, row: CaseResult) -> None:
            if also is not None:
                also(trial, index, row)
            seen(index, row)

        on_row, on_trial = None, each_trial
    tgt = target or build_target(prepared.config)
    try:
        return evaluate_repeated(
            tgt,
            prepared.goldens,
            cfg.metrics,
            repeats=cfg.repeats,
            concurrency=concurrency or cfg.concurrency,
            rate_limit=cfg.rate_limit,
            case_timeout_s=cfg.case_timeout_s,
            on_row=on_row,
            skip=skip,
            on_trial=on_trial,
            done_trials=done_trials,
        )
    finally:
        close = getattr(tgt, "close", None)
        if target is None and callable(close):
            close()


def to_artifact(
    prepared: Prepared,
    result: RunResult[CaseResult],
    target_name: str,
    *,
    shard: str | None = None,
    truncated_ids: frozenset[str] = frozenset(),
    subset: str | None = None,
) -> RunArtifact:
    """The run's artefact, with the provenance of the whole prepared eval (even for a shard)."""
    from evalkit._engine.checkpoint import config_fingerprint
    from evalkit.stats import significance

    cfg = prepared.config.model
    return build_artifact(
        result,
        cfg.metrics,
        target_name=target_name,
        target_description=cfg.target.description,
        goldens=goldens_info(prepared.goldens),
        seed=cfg.seed,
        resampling_stream=getattr(significance, "RESAMPLING_STREAM", None),
        config_name=prepared.config.name,
        git=git_state(),
        config_fingerprint=config_fingerprint(cfg),
        shard=shard,
        truncated_ids=truncated_ids,
        subset=subset,
    )


# ----------------------------------------------------------------------------- a run to a file


@dataclass(frozen=True)
class RunStart:
    """What a checkpointed run is about to do, told before its first case starts."""

    checkpoint: Path
    total: int  # cases in this run (in this shard, for a sharded run)
    done: int  # finished cases kept from the checkpoint, not run again
    retried: int  # cases that failed in the checkpointed run and run again
    resumed: bool  # a checkpoint with finished cases was picked up
    resume_requested: bool
    trials: int = 1  # repeats: k -- each case runs k times
    trials_done: int = 0  # finished trials kept from the checkpoint (repeats > 1)

    @property
    def to_run(self) -> int:
        """Target invocations still to make: cases, or (case, trial) pairs when repeated."""
        if self.trials > 1:
            return self.total * self.trials - self.trials_done
        return self.total - self.done


@dataclass(frozen=True)
class RunOutcome:
    """A finished :func:`run_to_artifact`: the artefact and where everything went."""

    artifact: RunArtifact
    path: Path  # where the artefact was written
    requested: Path  # where it was asked to go (OUT, or the shard's name for it)
    checkpoint: Path  # kept while cases failed, so --resume retries only those
    shard: ShardSpec | None


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`run_to_artifact`, with what the checkpoint kept.

    Still a ``KeyboardInterrupt``, so a caller's ``except Exception`` never swallows it.
    """

    def __init__(self, checkpoint: Path, saved: int, total: int, unit: str = "case(s)") -> None:
        super().__init__(f"interrupted: {saved} of {total} {unit} saved in {checkpoint}")
        self.checkpoint = checkpoint
        self.saved = saved
        self.total = total
        self.unit = unit  # "trial(s)" for a repeated run: what the checkpoint counts


def write_run(art: RunArtifact, path: str | Path, *, allow_failed: bool = False) -> Path:
    """Write a run artefact; one with failed cases never replaces the file at ``path``.

    A run with failed cases goes beside ``path`` (``base.json`` -> ``base.failed.json``;
    ``path``, perhaps a good baseline, is left as it was) unless ``allow_failed``.
    """
    target = Path(path)
    if art.failed and not allow_failed:
        target = with_infix(target, "failed")
    return write_artifact(art, target)


def select_cases(prepared: Prepared, cases: CaseFilter | None) -> tuple[Prepared, Subset | None]:
    """The eval of the cases ``-k``/``--case`` keep (all of them without a filter)."""
    if cases is None:
        return prepared, None
    goldens, subset = cases.select(prepared.goldens)
    _log.info(
        "-k/--case keep %d of %d case(s); the others are skipped",
        len(goldens),
        len(prepared.goldens),
    )
    return replace(prepared, goldens=goldens), subset


def _selection(subset: Subset | None) -> str | None:
    return None if subset is None else subset.selection


def run_output_path(
    config: LoadedConfig,
    out: Path | None,
    shard: ShardSpec | None = None,
    cases: CaseFilter | None = None,
) -> Path:
    """OUT, else the config's output path, named per shard or subset so none overwrites
    the whole run's artefact."""
    if out is not None:
        return out
    default = config.output_path
    if shard is not None:
        return with_infix(default, shard.slug)
    return default if cases is None else with_infix(default, "subset")


def run_to_artifact(
    prepared: Prepared,
    out: Path | None = None,
    *,
    shard: ShardSpec | None = None,
    resume: bool = False,
    allow_failed: bool = False,
    on_start: Callable[[RunStart], None] | None = None,
    on_row: RowCallback | None = None,
    target: Target | None = None,
    cases: CaseFilter | None = None,
) -> RunOutcome:
    """Run the prepared eval (or one shard of it) into an artefact file, losing nothing:
    every finished case is in the checkpoint the moment it finishes (code-notes.md)."""
    from evalkit._engine.shards import select_shard

    if shard is not None and cases is not None:
        raise InputError(
            f"--shard {shard} and {cases.describe()} both pick cases: a shard of a subset "
            "is neither; drop one of them"
        )
    if shard is not None and prepared.config.model.stop_early is not None:
        raise InputError(
            f"stop_early: shard {shard} runs only its own cases and cannot see whether the "
            "whole set's checks are settled, so a shard never stops early; run the gate "
            "unsharded to stop early, or remove stop_early from evalkit.yaml to shard"
        )
    todo, subset = select_cases(prepared, cases)
    if shard is not None:
        todo = replace(prepared, goldens=select_shard(prepared.goldens, shard))
    requested = run_output_path(prepared.config, out, shard, cases)
    # The checkpoint belongs to one selection: resuming with another is refused.
    part = str(shard) if shard is not None else None
    if subset is not None:
        part = f"cases {subset.selection}"
    total = len(todo.goldens)
    repeats = prepared.config.model.repeats
    with _checkpointed(prepared, requested, part, resume=resume, planned=total) as ckpt:
        done = ckpt.completed
        trials_done = ckpt.completed_trials  # repeats > 1: resumed per (case, trial)
        if on_start is not None:
            on_start(
                RunStart(
                    checkpoint=ckpt.path,
                    total=total,
                    done=len(done) + sum(len(t) >= repeats for t in trials_done.values()),
                    retried=len(ckpt.failed_before) + ckpt.failed_trials_before,
                    resumed=ckpt.resumed,
                    resume_requested=resume,
                    trials=repeats,
                    trials_done=sum(len(t) for t in trials_done.values()),
                )
            )
        result = run_checkpointed(todo, ckpt, target=target, on_row=on_row)
        art = to_artifact(
            prepared,
            result,
            result.name,
            shard=None if shard is None else str(shard),
            truncated_ids=frozenset(ckpt.truncated_ids),
            subset=_selection(subset),
        )
        path = _write_finished(ckpt, art, requested, allow_failed=allow_failed)
    return RunOutcome(art, path, requested, ckpt.path, shard)


@contextlib.contextmanager
def _checkpointed(
    prepared: Prepared, out: Path, part: str | None, *, resume: bool, planned: int
) -> Iterator[Checkpoint]:
    """The locked checkpoint of a run writing ``out`` (``part``: its shard or subset);
    Ctrl-C inside is :class:`RunInterrupted`, counting what the checkpoint file kept."""
    from evalkit._engine.checkpoint import (
        Checkpoint,
        checkpoint_path,
        read_checkpoint,
        run_identity,
    )
    from evalkit._util.atomic import check_writable

    identity = run_identity(prepared.config.model, prepared.goldens, part)
    ckpt_path = checkpoint_path(out, prepared.config.root)
    check_writable(out, ckpt_path)  # before anything runs (or is paid for)
    with Checkpoint.open(ckpt_path, identity, resume=resume) as ckpt:
        try:
            yield ckpt
        except KeyboardInterrupt:
            # the file, not a tally: the signal may land between a row's write and its count
            saved = read_checkpoint(ckpt_path)
            kept = saved.saved if saved is not None else 0
            repeats = prepared.config.model.repeats
            if repeats > 1:
                raise RunInterrupted(ckpt_path, kept, planned * repeats, "trial(s)") from None
            raise RunInterrupted(ckpt_path, kept, planned) from None


def _write_finished(
    ckpt: Checkpoint, art: RunArtifact, out: Path, *, allow_failed: bool = False
) -> Path:
    """:func:`write_run` a checkpointed run; the checkpoint goes once no case failed."""
    path = write_run(art, out, allow_failed=allow_failed)
    if not art.failed:
        ckpt.discard()
    return path


def run_checkpointed(
    todo: Prepared,
    ckpt: Checkpoint,
    *,
    target: Target | None = None,
    on_row: RowCallback | None = None,
    concurrency: int | None = None,
) -> RunResult[CaseResult]:
    """Run the cases of ``todo`` the checkpoint ``ckpt`` has not finished, appending each
    row the moment it finishes: every case's row (kept or new), in golden-set order."""
    if todo.config.model.repeats > 1:
        return run_candidate(
            todo,
            target=target,
            concurrency=concurrency,
            on_row=on_row,
            on_trial=lambda trial, _index, row: ckpt.append(row, trial=trial),
            done_trials=ckpt.completed_trials,
        )

    def record(index: int, row: CaseResult) -> None:
        ckpt.append(row)
        if on_row is not None:
            on_row(index, row)

    done = ckpt.completed
    skip = [c.id for c in todo.goldens if c.id in done]
    fresh = run_candidate(todo, target=target, concurrency=concurrency, skip=skip, on_row=record)
    new_rows = {row.case_id: row for row in fresh.per_query}
    return RunResult(
        fresh.name, [done[c.id] if c.id in done else new_rows[c.id] for c in todo.goldens]
    )


def find_baseline(
    config: LoadedConfig,
    override: str | Path | None,
    store: Callable[[], BaselineStore],
) -> tuple[RunArtifact | None, str]:
    """(baseline or None, one sentence on where it came from or where none was found):
    ``override`` (``--baseline``), else what the config's ``store`` answers."""
    from evalkit._store.protocol import FetchRequest
    from evalkit.gate.inputs import refuse_other_config

    if override is not None:
        art, origin = read_artifact(override), f"baseline {override}"
    else:
        fetched = store().fetch(FetchRequest(config.name, config.fetched_dir))
        if fetched.path is None:
            return None, f"no baseline: {fetched.detail}"
        art, origin = read_artifact(fetched.path), fetched.detail
    refuse_other_config(art, config.name, origin)
    return art, origin


@dataclass(frozen=True)
class Promotion:
    """A run made the configured baseline (``evalkit promote``)."""

    run: Path
    baseline: Path
    artifact: RunArtifact
    replaced: RunArtifact | None  # the baseline it replaced, when there was a readable one


def promote_run(config: LoadedConfig, run: str | Path | None = None) -> Promotion:
    """Make the run at ``run`` (default: the config's output) the configured baseline file,
    written in the current schema, atomically (what is refused: code-notes.md)."""
    from evalkit._app.store_opening import open_config_store
    from evalkit._store.file_store import FileStore
    from evalkit.gate.inputs import refuse_other_config

    store = open_config_store(config)
    if not isinstance(store, FileStore):
        raise ConfigError(
            f"{config.path}: baseline.store is {store.kind!r} ({store.describe()}): the "
            "GitHub Action promotes those on the default branch (mode: promote); to keep a "
            "baseline locally, set baseline: {path: baseline.json}"
        )
    source = Path(run) if run is not None else config.output_path
    art = read_artifact(source)
    failed = art.failed
    if failed:
        ids = ", ".join(row.case_id for row in failed[:5]) + (", …" if len(failed) > 5 else "")
        raise InputError(
            f"{source}: {len(failed)} of {len(art.result)} case(s) failed ({ids}); a baseline "
            "must hold every case: fix the failures, `evalkit run --resume`, then promote"
        )
    if art.shard is not None:
        raise InputError(
            f"{source}: is shard {art.shard} of a run; `evalkit merge` the shards, then "
            "promote the merged run"
        )
    if art.subset is not None:
        raise InputError(
            f"{source}: holds only the cases {art.subset} keeps; a baseline must hold every "
            "case: run without -k/--case, then promote"
        )
    refuse_other_config(art, config.name, str(source))
    replaced = None
    if store.path.is_file():
        try:
            replaced = read_artifact(store.path)
        except EvalkitError:
            replaced = None  # an unreadable baseline is not worth keeping from being replaced
    data = artifact_bytes(art, store.path)
    path = write_bytes_atomic(store.path, data)
    store.keep(data, art.git_commit)  # every promotion stays in the history (evalkit history)
    return Promotion(source, path, art, replaced)


def gate(
    prepared: Prepared,
    candidate: RunArtifact,
    baseline: RunArtifact | None,
    *,
    notes: Sequence[str] = (),
    baseline_chosen: bool = False,
    subset: Subset | None = None,
    reference: Reference | None = None,
    reference_chosen: bool = False,
    require_reference: bool = False,
) -> GateReport:
    """Validate the inputs against the goldens (:mod:`evalkit.gate.inputs`), then decide.

    ``baseline_chosen``: the user pointed at this baseline (``--baseline``, the
    config's file store), so one that cannot be paired is an input error.
    ``subset`` (``-k``/``--case``): decide on those cases only; the report says so and
    its verdict is never ``pass`` (:mod:`evalkit._spec.case_filter`).
    ``reference`` is what drift checks compare with (:mod:`evalkit.gate.reference`), and
    ``reference_chosen`` says the user pointed at it (``--reference``).
    """
    from evalkit.gate.inputs import check_baseline, check_candidate
    from evalkit.gate.model import GateOptions
    from evalkit.gate.procedure import evaluate_gate
    from evalkit.gate.reference import check_reference
    from evalkit.gate.slices import SliceSettings

    cfg = prepared.config.model
    checks = prepared.checks
    specs = list(checks.checks)
    goldens = prepared.goldens
    if subset is not None:
        candidate = subset.only(candidate)
        baseline = None if baseline is None else subset.only(baseline)
        goldens = subset.goldens(goldens)
        specs, left_out = subset.checks(specs)
        notes = (*notes, *left_out)
    # Runs read from schema 1, perhaps before the plugins were imported: vouch now.
    candidate = vouch_schema1_fingerprints(candidate)
    baseline = None if baseline is None else vouch_schema1_fingerprints(baseline)
    check_candidate(candidate, goldens, specs, config_name=prepared.config.name)
    candidate = _current_slices(candidate, goldens)
    clustering = goldens.cluster_assignment()
    notes = (
        *notes,
        cluster_change_note(clustering, baseline),
        _cluster_count(clustering, candidate),
    )
    if baseline is not None and baseline_chosen:
        check_baseline(baseline, candidate, specs)
    if subset is not None and reference is not None and reference.artifact is not None:
        reference = replace(reference, artifact=subset.only(reference.artifact))
    reference = check_reference(reference, candidate, specs, chosen=reference_chosen)
    if cfg.judge:
        from evalkit.metrics.judge_agreement import agreement_notes

        rows = candidate.result.per_query
        agreed = agreement_notes(rows, _judges(prepared.config), goldens, seed=cfg.seed)
        notes = (*notes, *agreed)
    if cfg.repeats > 1:
        from evalkit._engine.trials import trial_notes
        from evalkit.metrics.judge_consistency import consistency_notes

        rows = candidate.result.per_query
        notes = (*notes, *trial_notes(rows, cfg.metrics))
        judged = [metric for metric, _ in _judges(prepared.config)]
        notes = (*notes, *consistency_notes(rows, judged, seed=cfg.seed))
    report = evaluate_gate(
        specs,
        candidate,
        baseline,
        reference=reference,
        options=GateOptions(
            n_resamples=cfg.n_resamples,
            seed=cfg.seed,
            require_baseline=cfg.require_baseline or checks.require_baseline,
            correction=checks.correction,
            extra_notes=tuple(n for n in notes if n),
            require_reference=(
                require_reference or cfg.require_reference or checks.require_reference
            ),
            slices=SliceSettings(cfg.slices.fdr, cfg.slices.method, cfg.slices.min_cases),
            clusters=None if clustering is None else dict(clustering.members),
        ),
    )
    return report if subset is None else replace(report, subset=subset)


def _cluster_count(current: ClusterAssignment | None, candidate: RunArtifact) -> str:
    """The gate's line counting the candidate's cases' clusters, when declared."""
    if current is None:
        return ""
    from evalkit.stats.clustered_decide import cluster_count_text, clustering_of

    ids = [row.query_id for row in candidate.result.per_query]
    text = cluster_count_text(clustering_of(ids, current.members), current.field_name)
    return f"{text}: every comparison is inferred by cluster (docs/clusters.md)"


def cluster_change_note(current: ClusterAssignment | None, run: RunArtifact | None) -> str:
    """A line when ``run`` (the baseline) recorded another cluster assignment than the
    goldens' now: its cases still pair by id, and inference uses the current one."""
    if run is None or current is None:
        return ""
    recorded = None if run.goldens is None else run.goldens.clusters
    if recorded == current:
        return ""
    if recorded is None:
        was = "declared no clusters"
    elif recorded.field_name != current.field_name:
        was = f"clustered by {recorded.field_name}"
    else:
        moved = current.reassigned(recorded)
        was = f"put {len(moved)} case(s) in other clusters"
    return (
        f"the baseline {was}; its cases are paired by case id and every verdict is "
        f"inferred by the current clusters ({current.field_name})"
    )


def _current_slices(candidate: RunArtifact, goldens: GoldenSet) -> RunArtifact:
    """The candidate with the goldens' slice assignment as it is now.

    Slice fields are left out of the case fingerprints, so a candidate made before a
    case was re-tagged still answers these goldens; its slices are the goldens' own.
    """
    current = goldens.slice_assignment()
    info = candidate.goldens
    if info is None or info.slices == current:
        return candidate
    return replace(candidate, goldens=replace(info, slices=current))


# ----------------------------------------------------------------------------- the gate command


def config_inputs(config: LoadedConfig) -> dict[str, Path | None]:
    """The files a config reads: no command may write over them."""
    return {
        "config": config.path,
        "goldens file": config.resolve(config.model.goldens),
        "checks file": config.resolve(config.model.checks),
    }


@dataclass(frozen=True)
class GateAsk:
    """What ``evalkit gate`` was asked: the files to use and how to run the candidate."""

    candidate: Path | None = None  # a run artefact to gate instead of running the target
    baseline: Path | None = None  # else the configured store's
    reference: Path | None = None  # for drift checks (evalkit.gate.reference)
    out: Path | None = None  # where the candidate run goes (else the config's output)
    concurrency: int | None = None
    cache_only: bool = False
    cases: CaseFilter | None = None  # -k/--case
    require_baseline: bool = False
    require_reference: bool = False
    reports: Mapping[str, Path | None] = field(default_factory=dict)  # flag -> report file
    stop_early: bool | None = None  # --stop-early/--no-stop-early; None: as the config says
    resume: bool = False  # stop_early: keep the checkpoint's finished cases, run the rest


@dataclass(frozen=True)
class GateRun:
    """A decided gate: the report, the candidate, and where its run went (if it ran)."""

    report: GateReport
    candidate: RunArtifact
    run_out: Path  # where a run of the candidate was asked to go
    written: Path | None  # where it went (None: --candidate, nothing ran)
    reference: Reference | None  # what drift checks compared with (evalkit.gate.reference)
    candidate_file: Path | None  # the candidate's artefact: --candidate, or the run written
    config: LoadedConfig  # as the gate loaded it (overrides applied)
    store: Callable[[], BaselineStore]  # the config's store, opened once, on first use

    def trend(self) -> DriftTrend:
        """The HTML report's drift trend, the candidate's artefact last (evalkit.gate.reference):
        from the store and the verdicts the gate decided with, neither opened nor read again."""
        from evalkit._app.reference_lookup import report_trends

        return report_trends(
            self.config, self.report, self.candidate_file, self.reference, store=self.store()
        )


@contextlib.contextmanager
def noting_client_saturation() -> Iterator[list[str]]:
    """The client-saturation warnings of a run, kept for the gate's report (latency checks
    read the latencies they inflated); every warning caught is shown again as it was."""
    import warnings

    from evalkit._engine.client_load import ClientSaturationWarning

    saturated: list[str] = []
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as recorded:
            warnings.simplefilter("always", ClientSaturationWarning)
            caught = recorded
            yield saturated
    finally:
        for w in caught:
            if issubclass(w.category, ClientSaturationWarning):
                saturated.append(f"client saturation: {w.message}")
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)


def gate_config(
    config: LoadedConfig,
    ask: GateAsk,
    *,
    on_start: Callable[[int], None] | None = None,
    on_row: RowCallback | None = None,
    on_checks: Callable[[Sequence[CheckSpec], RunArtifact], None] | None = None,
) -> GateRun:
    """Everything ``evalkit gate`` decides, in the order that spends nothing on bad input
    (what is refused first, and the callbacks: code-notes.md)."""
    from evalkit._app.reference_lookup import find_reference
    from evalkit._app.store_opening import open_config_store
    from evalkit._util.atomic import check_writable
    from evalkit._util.paths import refuse_overwriting_inputs
    from evalkit.gate.reference import refuse_unused

    if ask.candidate is not None:
        for flag, value in (("--out", ask.out), ("--concurrency", ask.concurrency)):
            if value is not None:
                raise InputError(
                    f"{flag} applies when the gate runs the target; with --candidate "
                    f"{ask.candidate} nothing is run: drop {flag}, or drop --candidate"
                )
    cfg = config.with_overrides(require_baseline=True) if ask.require_baseline else config
    run_out = run_output_path(cfg, ask.out, None, ask.cases)
    ran_to = None if ask.candidate is not None else run_out
    check_writable(*ask.reports.values(), ran_to)
    stored = cfg.baseline  # defaults filled in: a file store always has a path
    configured = cfg.resolve(stored.path) if stored.kind == "file" and stored.path else None
    chosen_baseline = ask.baseline if ask.baseline is not None else configured
    out_flag = "--out" if ask.out is not None else f"output ({cfg.path})"
    refuse_overwriting_inputs(
        {**ask.reports, out_flag: ran_to},
        {
            **config_inputs(cfg),
            "candidate": ask.candidate,
            "baseline": chosen_baseline,
            "reference": ask.reference,
        },
    )
    for role, other in (("baseline", chosen_baseline), ("reference", ask.reference)):
        if (
            ask.candidate is not None
            and other is not None
            and os.path.realpath(ask.candidate) == os.path.realpath(other)
        ):
            raise InputError(
                f"the {role} {other} is the candidate itself; a run compared with "
                f"itself always passes: pass the {role} made from the code you compare against"
            )
    # opened at the first use, once: a GitHub store imports httpx and PyGithub, which a
    # gate given every file never needs
    store = functools.cache(lambda: open_config_store(cfg))
    # Before the (possibly slow, paid) run: a configured baseline that is not there is exit 2.
    base, where = find_baseline(cfg, ask.baseline, store)
    prepared = prepare(cfg, cache_only=ask.cache_only)
    chosen, subset = select_cases(prepared, ask.cases)  # a bad -k is exit 2 here too
    # Before the (paid) run: the reference file is read, and one no check uses is refused.
    ref = find_reference(cfg, ask.reference, prepared.checks.checks, store)
    refuse_unused(ref, prepared.checks.checks)
    if on_checks is not None and base is not None:
        on_checks(chosen.checks.checks, base)
    from evalkit._app.early_stop import settings_in_force

    stopping = settings_in_force(cfg, ask)
    # Where no baseline was found matters only to a check that compares with one.
    no_baseline = base is None and any(c.is_baseline for c in prepared.checks.checks)
    report, candidate, written = run_and_decide(
        prepared,
        ask,
        base,
        stopping,
        run_out,
        notes=(where,) if no_baseline else (),
        chosen=chosen,
        subset=subset,
        # A file the user named (--baseline, the file store) must pair; see gate_inputs.
        baseline_chosen=chosen_baseline is not None,
        reference=ref,
        on_start=on_start,
        on_row=on_row,
    )
    return GateRun(report, candidate, run_out, written, ref, ask.candidate or written, cfg, store)


def run_and_decide(
    prepared: Prepared,
    ask: GateAsk,
    base: RunArtifact | None,
    stopping: StopEarlyConfig | None,
    run_out: Path,
    *,
    notes: Sequence[str] = (),
    chosen: Prepared | None = None,
    subset: Subset | None = None,
    baseline_chosen: bool = False,
    reference: Reference | None = None,
    target: Target | None = None,
    allow_failed: bool = False,
    on_start: Callable[[int], None] | None = None,
    on_row: RowCallback | None = None,
) -> tuple[GateReport, RunArtifact, Path | None]:
    """The gate's candidate (``ask.candidate``, else run to ``run_out``, stopping early with
    ``stopping``) and its report: ``evalkit gate``'s and the Action's.  ``target``: the
    caller's, left open; ``allow_failed``: a run with failed cases still goes to ``run_out``."""
    written: Path | None = None
    saturated: list[str] = []
    early: EarlyRun | None = None
    if ask.candidate is not None:
        candidate = read_artifact(ask.candidate)
    elif stopping is not None:
        with noting_client_saturation() as saturated:
            early, candidate, written = run_stopping_early_to(
                prepared,
                base,
                stopping,
                run_out,
                resume=ask.resume,
                concurrency=ask.concurrency,
                target=target,
                on_start=on_start,
                on_row=on_row,
            )
    else:
        chosen = prepared if chosen is None else chosen
        if on_start is not None:  # each trial advances the progress
            on_start(len(chosen.goldens) * prepared.config.model.repeats)
        with noting_client_saturation() as saturated:  # no checkpoint: cut short, it reruns
            result = run_candidate(
                chosen, target=target, concurrency=ask.concurrency, on_row=on_row
            )
            candidate = to_artifact(prepared, result, result.name, subset=_selection(subset))
            written = write_run(candidate, run_out, allow_failed=allow_failed)
    notes = (*notes, *saturated)
    decided, gated, compared = prepared, candidate, base
    stopped = None if early is None else early.stopped
    if early is not None and stopped is not None:
        # The fixed-n gate on the cases the stopped run ran, labelled with how and why.
        specs, left_out = early.subset.checks(list(prepared.checks.checks))
        decided = replace(
            prepared,
            goldens=early.subset.goldens(prepared.goldens),
            checks=replace(prepared.checks, checks=tuple(specs)),
        )
        gated = replace(candidate, subset=None)
        compared = None if base is None else early.subset.only(base)
        notes = (*notes, *left_out)
        baseline_chosen = False
    report = gate(
        decided,
        gated,
        compared,
        notes=notes,
        baseline_chosen=baseline_chosen,
        subset=subset,
        reference=reference,
        reference_chosen=ask.reference is not None,
        require_reference=ask.require_reference,
    )
    if stopped is not None:
        from evalkit.gate.model import run_summary

        # The baseline as it is (its size, its failures), not the rows this sample compared.
        baseline = None if base is None else run_summary(base)
        report = replace(report, baseline=baseline, stopped_early=stopped)
    return report, candidate, written


def run_stopping_early_to(
    prepared: Prepared,
    base: RunArtifact | None,
    settings: StopEarlyConfig,
    run_out: Path,
    *,
    resume: bool = False,
    concurrency: int | None = None,
    target: Target | None = None,
    on_start: Callable[[int], None] | None = None,
    on_row: RowCallback | None = None,
) -> tuple[EarlyRun, RunArtifact, Path]:
    """The gate's run with ``stop_early:`` (:func:`run_and_decide`),
    written to ``run_out``: every finished row kept in the run's checkpoint so ``resume``
    goes on in the same order (evalkit._app.early_stop).  ``target``: the caller's (the
    Action's isolated one), used for every batch and left open; else the config's."""
    from evalkit._app.early_stop import run_stopping_early

    planned = len(prepared.goldens)
    if settings.max_cases is not None:
        planned = min(planned, settings.max_cases)
    tgt = target if target is not None else build_target(prepared.config)  # one for every batch
    try:
        with _checkpointed(prepared, run_out, None, resume=resume, planned=planned) as ckpt:
            if on_start is not None:
                on_start(planned * prepared.config.model.repeats)
            early = run_stopping_early(
                prepared,
                base,
                settings,
                lambda part: run_checkpointed(
                    part, ckpt, target=tgt, on_row=on_row, concurrency=concurrency
                ),
                lambda part, result: to_artifact(part, result, result.name),
            )
            stopped = early.stopped
            candidate = to_artifact(
                replace(prepared, goldens=early.subset.goldens(prepared.goldens)),
                early.result,
                early.result.name,
                # a partial run is never promoted as a baseline (promote_run refuses a subset)
                subset=None
                if stopped is None
                else f"stop_early ({stopped.cases_run:,} of {stopped.cases_total:,} cases)",
            )
            written = _write_finished(ckpt, candidate, run_out)
    finally:
        close = getattr(tgt, "close", None)
        if target is None and callable(close):
            close()
    return early, candidate, written
