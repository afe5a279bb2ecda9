"""Sharding: one eval split over N machines (``run --shard i/N``), merged back (``merge``).

The split depends on the case ids alone (SHA-256 order, dealt round-robin); merging
refuses anything that would make the merged run lie (docs/design/code-notes.md).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from evalkit._model.golden_cases import GoldenSet
from evalkit._model.results import RunResult
from evalkit._spec.artifact import RunArtifact
from evalkit.errors import ArtifactError, InputError

_SPEC = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


@dataclass(frozen=True, order=True)
class ShardSpec:
    """Shard ``index`` of ``count``, numbered from 1 (``"2/4"``)."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1:
            raise InputError(f"shard {self}: the number of shards must be at least 1")
        if not 1 <= self.index <= self.count:
            raise InputError(
                f"shard {self}: shards are numbered from 1 to {self.count} "
                f"(use 1/{self.count} .. {self.count}/{self.count})"
            )

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def slug(self) -> str:
        """File-name form, e.g. ``shard-2-of-4``."""
        return f"shard-{self.index}-of-{self.count}"


def parse_shard(text: str) -> ShardSpec:
    """``"2/4"`` -> ``ShardSpec(2, 4)``; anything else raises a one-line :class:`InputError`."""
    match = _SPEC.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise InputError(
            f"--shard {text!r}: expected i/N, the shard number and the number of shards, "
            "e.g. --shard 2/4 (numbered from 1)"
        )
    return ShardSpec(int(match.group(1)), int(match.group(2)))


def assign(ids: Iterable[str], count: int) -> dict[str, int]:
    """``{case id: shard number (1..count)}``: sorted by SHA-256 of the id, dealt round-robin
    (``count`` comes from a :class:`ShardSpec`, which refuses less than 1)."""
    ordered = sorted(set(ids), key=lambda i: (hashlib.sha256(i.encode("utf-8")).hexdigest(), i))
    return {case_id: position % count + 1 for position, case_id in enumerate(ordered)}


def select_shard(goldens: GoldenSet, spec: ShardSpec) -> GoldenSet:
    """The cases of shard ``spec``, in golden-file order.

    An empty shard (more shards than cases) is refused: a job that evaluates
    nothing would still report success.
    """
    owner = assign(goldens.ids(), spec.count)
    cases = [case for case in goldens if owner[case.id] == spec.index]
    if not cases:
        raise InputError(
            f"shard {spec} of a {len(goldens)}-case golden set is empty; "
            f"use at most {len(goldens)} shard(s)"
        )
    source = f"{goldens.source} [shard {spec}]" if goldens.source else f"shard {spec}"
    return GoldenSet(
        cases, source=source, slices=goldens.slice_dimensions, clusters=goldens.cluster_field
    )


# ----------------------------------------------------------------------------- merge


def _spec_of(art: RunArtifact, label: str) -> ShardSpec:
    if art.shard is None:
        raise ArtifactError(
            f"{label}: not a shard artefact (it was not written by `evalkit run --shard i/N`); "
            "merge combines the shards of one sharded run"
        )
    try:
        return parse_shard(art.shard)
    except InputError:
        raise ArtifactError(f"{label}: malformed shard field {art.shard!r}") from None


def _short(value: object) -> str:
    return str(value)[:12]


def _check_same_run(first: RunArtifact, first_label: str, art: RunArtifact, label: str) -> None:
    """Everything that must be equal across the shards of one run."""
    pair = f"{first_label} and {label}"
    if art.config_fingerprint is None or first.config_fingerprint is None:
        missing = label if art.config_fingerprint is None else first_label
        raise ArtifactError(
            f"{missing}: has no config fingerprint, so it cannot be shown to come from the same "
            "config as the other shards; rerun it with `evalkit run --shard i/N`"
        )
    if art.config_fingerprint != first.config_fingerprint:
        raise ArtifactError(
            f"{pair} come from different configs (config fingerprint "
            f"{_short(first.config_fingerprint)} vs {_short(art.config_fingerprint)}: target, "
            "metrics, judges or plugins differ); rerun every shard with one evalkit.yaml"
        )
    assert first.goldens is not None
    assert art.goldens is not None
    if art.goldens.fingerprint != first.goldens.fingerprint:
        raise ArtifactError(
            f"{pair} were run on different golden sets (goldens fingerprint "
            f"{_short(first.goldens.fingerprint)} vs {_short(art.goldens.fingerprint)}); "
            "rerun every shard on one golden file"
        )
    if list(art.metrics) != list(first.metrics):
        raise ArtifactError(
            f"{pair} computed different metrics ({', '.join(first.metrics)} vs "
            f"{', '.join(art.metrics)}); rerun every shard with one config"
        )
    for name, info in first.metrics.items():
        other = art.metrics[name]
        if other != info:
            what = (
                f"fingerprint {_short(info.fingerprint)} vs {_short(other.fingerprint)}"
                if other.fingerprint != info.fingerprint
                else "polarity or judge differs"
            )
            raise ArtifactError(
                f"{pair} define metric {name!r} differently ({what}); rerun every shard "
                "with one evalkit version and one set of plugins"
            )
    if art.path != first.path or art.result.name != first.result.name:
        raise ArtifactError(
            f"{pair} are runs of different targets ({first.result.name!r} vs "
            f"{art.result.name!r}); merge shards of one run"
        )
    if art.git_commit and first.git_commit and art.git_commit != first.git_commit:
        raise ArtifactError(
            f"{pair} were run on different commits ({_short(first.git_commit)} vs "
            f"{_short(art.git_commit)}); rerun every shard on one commit"
        )
    if (art.seed, art.resampling_stream) != (first.seed, first.resampling_stream):
        raise ArtifactError(
            f"{pair} use different seeds or resampling streams; rerun every shard with one config"
        )


def merge(shards: Sequence[RunArtifact], *, sources: Sequence[str] | None = None) -> RunArtifact:
    """Merge the artefacts of every shard of one run into the run's artefact.

    ``sources`` labels the shards in messages (their file paths, one each); the rows come
    back in golden-set order, exactly as an unsharded run would have them.
    Every refusal is one :class:`ArtifactError` line naming the culprit.
    """
    if not shards:
        raise InputError("merge needs the artefacts of every shard; none were given")
    labels = (
        list(sources) if sources is not None else [f"shard #{i}" for i in range(1, 1 + len(shards))]
    )
    specs = [_spec_of(art, label) for art, label in zip(shards, labels, strict=True)]
    for art, label in zip(shards, labels, strict=True):
        if art.goldens is None:
            raise ArtifactError(
                f"{label}: has no goldens fingerprint, so missing cases cannot be detected; "
                "rerun it with `evalkit run --shard i/N`"
            )
    counts = sorted({spec.count for spec in specs})
    if len(counts) > 1:
        shown = ", ".join(f"{label} is {spec}" for label, spec in zip(labels, specs, strict=True))
        raise ArtifactError(f"the shards disagree on how many shards there are ({shown})")
    count = counts[0]
    by_index: dict[int, str] = {}
    for label, spec in zip(labels, specs, strict=True):
        if spec.index in by_index:
            raise ArtifactError(
                f"shard {spec} was given twice ({by_index[spec.index]} and {label}); "
                "pass each shard's artefact once"
            )
        by_index[spec.index] = label
    missing_shards = [f"{i}/{count}" for i in range(1, count + 1) if i not in by_index]
    if missing_shards:
        raise ArtifactError(
            f"shard(s) {', '.join(missing_shards)} missing: got {len(shards)} of {count}; "
            "pass every shard's artefact (did a matrix job fail?)"
        )
    first, first_label = shards[0], labels[0]
    for art, label in zip(shards[1:], labels[1:], strict=True):
        _check_same_run(first, first_label, art, label)
    assert first.goldens is not None
    golden_ids = list(first.goldens.cases)
    owner = assign(golden_ids, count)
    rows: dict[str, Any] = {}
    where: dict[str, str] = {}
    truncated: set[str] = set()
    for art, label, spec in zip(shards, labels, specs, strict=True):
        for row in art.result.per_query:
            cid = row.query_id
            if cid in rows:
                raise ArtifactError(
                    f"case {cid!r} appears in both {where[cid]} and {label}; "
                    "each case belongs to exactly one shard"
                )
            if cid not in owner:
                raise ArtifactError(
                    f"{label}: case {cid!r} is not in the golden set the shards were run on"
                )
            if owner[cid] != spec.index:
                raise ArtifactError(
                    f"{label} (shard {spec}) holds case {cid!r}, which belongs to shard "
                    f"{owner[cid]}/{count}; the shard artefacts were not made by this evalkit's "
                    "`evalkit run --shard`"
                )
            rows[cid] = row
            where[cid] = label
        truncated |= art.truncated_ids
    absent = [cid for cid in golden_ids if cid not in rows]
    if absent:
        shown = ", ".join(absent[:10]) + (
            f" … and {len(absent) - 10} more" if len(absent) > 10 else ""
        )
        raise ArtifactError(
            f"{len(absent)} case(s) of the golden set have no row in any shard: {shown} "
            "(a shard run was cut short? finish it with `evalkit run --shard i/N --resume`)"
        )
    dirty = [art.git_dirty for art in shards if art.git_dirty is not None]
    return replace(
        first,
        result=RunResult(first.result.name, [rows[cid] for cid in golden_ids]),
        metrics=dict(first.metrics),
        created_at=max(art.created_at for art in shards),
        git_commit=next((art.git_commit for art in shards if art.git_commit), None),
        git_dirty=any(dirty) if dirty else None,
        truncated_ids=frozenset(truncated),
        shard=None,
        subset=None,
        read_schema_version=None,
        source=None,
    )
