"""Sharding: the partition is deterministic and balanced; merge rebuilds the unsharded run
or refuses, in one line naming the culprit."""

from __future__ import annotations

import dataclasses
import hashlib
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalkit._engine.execute import evaluate
from evalkit._engine.shards import ShardSpec, assign, merge, parse_shard, select_shard
from evalkit._model.registry import register_metric
from evalkit._spec.artifact import (
    GoldensInfo,
    RunArtifact,
    artifact_to_dict,
    build_artifact,
    read_artifact,
    write_artifact,
)
from evalkit._spec.artifact_rows import COLUMNS
from evalkit.errors import ArtifactError, InputError
from evalkit.goldens import GoldenCase, GoldenSet
from evalkit.targets.callable import CallableTarget

METRICS = ["recall@1", "ndcg@10", "latency_p95"]


def goldens(n: int = 23) -> GoldenSet:
    return GoldenSet(
        [
            GoldenCase(id=f"case-{i:03d}", query=f"query {i}", relevant=frozenset({f"d{i % 5}"}))
            for i in range(n)
        ],
        source="goldens.jsonl",
    )


def ranker(case: GoldenCase) -> list[str]:
    i = int(case.id.removeprefix("case-"))
    return [f"d{(i * 7) % 5}", f"d{i % 5}", "d9"]


TARGET = CallableTarget(ranker, name="ranker")


def run_artifact(
    gs: GoldenSet, spec: ShardSpec | None, *, config_fp: str = "cfg-1", commit: str = "abc123"
) -> RunArtifact:
    subset = gs if spec is None else select_shard(gs, spec)
    result = evaluate(TARGET, subset, METRICS)
    art = build_artifact(
        result,
        METRICS,
        goldens=GoldensInfo(gs.fingerprint(), gs.case_fingerprints()),
        config_name="demo",
        seed=42,
        git=(commit, False),
        config_fingerprint=config_fp,
        shard=None if spec is None else str(spec),
    )
    return art


def comparable(art: RunArtifact) -> dict[str, Any]:
    """The artefact document without what legitimately differs: clock, timings, shard label."""
    doc = artifact_to_dict(art)
    for key in ("created_at", "shard"):
        doc.pop(key)
    latency = COLUMNS.index("latency_ms")
    for row in doc["rows"]:
        row[latency] = None
    return doc


def all_shards(gs: GoldenSet, n: int, **kwargs: Any) -> list[RunArtifact]:
    return [run_artifact(gs, ShardSpec(i, n), **kwargs) for i in range(1, n + 1)]


# --- parsing i/N --------------------------------------------------------------------------


def test_parse_shard_reads_i_of_n() -> None:
    assert parse_shard("2/4") == ShardSpec(2, 4)
    assert parse_shard(" 1 / 1 ") == ShardSpec(1, 1)
    assert str(ShardSpec(3, 8)) == "3/8"
    assert ShardSpec(3, 8).slug == "shard-3-of-8"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0/4", r"numbered from 1 to 4 \(use 1/4 \.\. 4/4\)"),
        ("5/4", r"numbered from 1 to 4"),
        ("1/0", r"number of shards must be at least 1"),
        ("2", r"expected i/N"),
        ("a/b", r"expected i/N"),
        ("-1/4", r"expected i/N"),
        ("", r"expected i/N"),
    ],
)
def test_bad_shard_specs_are_refused_in_one_line(text: str, expected: str) -> None:
    with pytest.raises(InputError, match=expected) as info:
        parse_shard(text)
    assert "\n" not in str(info.value)


# --- the partition ------------------------------------------------------------------------


@pytest.mark.parametrize("n_cases", [1, 2, 7, 100, 1001])
@pytest.mark.parametrize("n_shards", [1, 2, 3, 8, 16])
def test_partition_is_complete_disjoint_and_balanced(n_cases: int, n_shards: int) -> None:
    ids = [f"id-{i}" for i in range(n_cases)]
    owner = assign(ids, n_shards)
    assert set(owner) == set(ids)
    sizes = [sum(1 for s in owner.values() if s == k) for k in range(1, n_shards + 1)]
    assert sum(sizes) == n_cases
    assert max(sizes) - min(sizes) <= 1


def test_partition_ignores_the_order_of_the_golden_file() -> None:
    ids = [f"q{i}" for i in range(200)]
    shuffled = ids[:]
    random.Random(7).shuffle(shuffled)
    assert assign(ids, 4) == assign(shuffled, 4)


def test_partition_is_pinned_so_every_evalkit_version_splits_alike() -> None:
    # Shards made by one job and merged by another must agree on the split, so
    # the rule (ids ordered by sha256 of their UTF-8 bytes, dealt round-robin)
    # is pinned against hand-computed digests, not against the implementation.
    ids = ["a", "b", "c", "d", "e"]
    digests = {i: hashlib.sha256(i.encode()).hexdigest()[:4] for i in ids}
    assert digests == {"a": "ca97", "b": "3e23", "c": "2e7d", "d": "18ac", "e": "3f79"}
    # ascending digest order: d, c, b, e, a -> dealt to shards 1, 2, 1, 2, 1
    assert assign(ids, 2) == {"d": 1, "c": 2, "b": 1, "e": 2, "a": 1}


def test_partition_spreads_neighbouring_cases() -> None:
    # The first 50 cases of the file (often one topic, or the slow ones) must not
    # all land on one job.
    owner = assign([f"case-{i:04d}" for i in range(1000)], 4)
    first = [owner[f"case-{i:04d}"] for i in range(50)]
    assert all(first.count(k) >= 5 for k in range(1, 5))


def test_select_shard_keeps_golden_order_and_the_union_is_the_set() -> None:
    gs = goldens(23)
    parts = [select_shard(gs, ShardSpec(i, 3)) for i in (1, 2, 3)]
    for part in parts:
        assert part.ids() == [cid for cid in gs.ids() if cid in part]
        assert "[shard" in (part.source or "")
    assert sorted(cid for part in parts for cid in part.ids()) == sorted(gs.ids())


def test_an_empty_shard_is_refused() -> None:
    with pytest.raises(
        InputError, match=r"shard 4/4 of a 3-case golden set is empty; use at most 3"
    ):
        select_shard(goldens(3), ShardSpec(4, 4))


# --- merge: the happy path ----------------------------------------------------------------


def test_merged_shards_equal_one_unsharded_run(tmp_path: Path) -> None:
    gs = goldens(23)
    whole = run_artifact(gs, None)
    paths = []
    for i, art in enumerate(all_shards(gs, 3), 1):
        paths.append(write_artifact(art, tmp_path / f"shard-{i}.json"))
    shards = [read_artifact(p) for p in paths]
    random.Random(1).shuffle(shards)  # the order shards are given in does not matter
    merged = merge(shards)
    assert merged.shard is None
    assert merged.result.ids() == gs.ids()
    assert comparable(merged) == comparable(whole)
    # and it survives its own round trip, so `evalkit gate --candidate merged.json` reads it
    again = read_artifact(write_artifact(merged, tmp_path / "merged.json"))
    assert comparable(again) == comparable(whole)


def test_merge_keeps_failed_rows_and_truncation_flags() -> None:
    gs = goldens(6)

    def flaky(case: GoldenCase) -> list[str]:
        if case.id == "case-004":
            raise ValueError("backend said no")
        return ranker(case)

    arts = []
    for i in (1, 2):
        result = evaluate(
            CallableTarget(flaky, name="ranker"), select_shard(gs, ShardSpec(i, 2)), METRICS
        )
        art = build_artifact(
            result,
            METRICS,
            goldens=GoldensInfo(gs.fingerprint(), gs.case_fingerprints()),
            git=("c", False),
            config_fingerprint="cfg",
            shard=f"{i}/2",
            truncated_ids=frozenset({"case-001"} & set(result.ids())),
        )
        arts.append(art)
    merged = merge(arts)
    assert [r.case_id for r in merged.failed] == ["case-004"]
    assert "backend said no" in (merged.failed[0].error or "")
    assert merged.truncated_ids == {"case-001"}


def test_merge_of_one_shard_of_one_is_the_run() -> None:
    gs = goldens(5)
    assert comparable(merge([run_artifact(gs, ShardSpec(1, 1))])) == comparable(
        run_artifact(gs, None)
    )


def test_merged_provenance_takes_the_newest_time_and_any_dirty_tree() -> None:
    gs = goldens(8)
    a, b = all_shards(gs, 2)
    a = dataclasses.replace(a, created_at="2026-01-01T00:00:00Z")
    b = dataclasses.replace(b, created_at="2026-01-02T00:00:00Z", git_dirty=True)
    merged = merge([a, b])
    assert merged.created_at == "2026-01-02T00:00:00Z"
    assert merged.git_dirty is True
    assert merged.config_fingerprint == "cfg-1"


# --- merge: every refusal names the culprit -----------------------------------------------


def refusal(shards: list[RunArtifact], labels: list[str] | None = None) -> str:
    names = labels or [f"s{i}.json" for i in range(1, len(shards) + 1)]
    with pytest.raises(ArtifactError) as info:
        merge(shards, sources=names)
    message = str(info.value)
    assert "\n" not in message
    return message


def edited(art: RunArtifact, **changes: Any) -> RunArtifact:
    return dataclasses.replace(art, **changes)


def test_no_shards_at_all_is_a_usage_error() -> None:
    with pytest.raises(InputError, match="none were given"):
        merge([])


def test_merge_refuses_a_run_that_is_not_a_shard() -> None:
    gs = goldens(8)
    a, _ = all_shards(gs, 2)
    message = refusal([a, run_artifact(gs, None)])
    assert "s2.json: not a shard artefact" in message


def test_merge_refuses_a_missing_shard() -> None:
    a, _b, c = all_shards(goldens(9), 3)
    assert "shard(s) 2/3 missing: got 2 of 3" in refusal([a, c])


def test_merge_refuses_a_shard_given_twice() -> None:
    a, b = all_shards(goldens(9), 2)
    assert "shard 2/2 was given twice (s2.json and s3.json)" in refusal([a, b, b])


def test_merge_refuses_shards_of_different_splits() -> None:
    gs = goldens(9)
    a, _ = all_shards(gs, 2)
    _, b, _ = all_shards(gs, 3)
    message = refusal([a, b])
    assert "disagree on how many shards" in message
    assert "s1.json is 1/2" in message
    assert "s2.json is 2/3" in message


def test_merge_refuses_shards_from_different_configs() -> None:
    gs = goldens(9)
    a, _ = all_shards(gs, 2)
    _, b = all_shards(gs, 2, config_fp="cfg-2")
    message = refusal([a, b])
    assert "s1.json and s2.json come from different configs" in message
    assert "cfg-1 vs cfg-2" in message


def test_merge_refuses_shards_of_different_golden_sets() -> None:
    a, _ = all_shards(goldens(9), 2)
    _, b = all_shards(goldens(10), 2)
    assert "s1.json and s2.json were run on different golden sets" in refusal([a, b])


def test_merge_refuses_shards_from_different_commits() -> None:
    gs = goldens(9)
    a, _ = all_shards(gs, 2)
    _, b = all_shards(gs, 2, commit="def456")
    assert "were run on different commits (abc123 vs def456)" in refusal([a, b])


def test_merge_refuses_a_case_in_two_shards() -> None:
    gs = goldens(9)
    a, b = all_shards(gs, 2)
    stray = a.result.per_query[0]
    b.result.per_query.append(stray)
    message = refusal([a, b])
    assert f"case {stray.query_id!r}" in message
    assert "appears in both s1.json and s2.json" in message


def test_merge_refuses_a_case_in_the_wrong_shard() -> None:
    gs = goldens(9)
    a, b = all_shards(gs, 2)
    moved = a.result.per_query.pop()
    b.result.per_query.append(moved)
    message = refusal([a, b])
    assert (
        f"s2.json (shard 2/2) holds case {moved.query_id!r}, which belongs to shard 1/2" in message
    )


def test_merge_refuses_missing_cases_and_names_them() -> None:
    gs = goldens(9)
    a, b = all_shards(gs, 2)
    lost = b.result.per_query.pop(0)
    message = refusal([a, b])
    assert f"1 case(s) of the golden set have no row in any shard: {lost.query_id}" in message
    assert "--resume" in message


def test_merge_refuses_a_case_outside_the_golden_set() -> None:
    gs = goldens(9)
    a, b = all_shards(gs, 2)
    other = run_artifact(goldens(12), None).result.per_query[-1]
    b.result.per_query.append(other)
    assert f"case {other.query_id!r} is not in the golden set" in refusal([a, b])


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda art: edited(art, goldens=None), "has no goldens fingerprint"),
        (lambda art: edited(art, shard="two of four"), "malformed shard field"),
        (lambda art: edited(art, seed=7), "different seeds"),
        (lambda art: edited(art, config_fingerprint=None), "s2.json: has no config fingerprint"),
        (
            lambda art: edited(
                art,
                metrics={
                    **art.metrics,
                    "ndcg@10": dataclasses.replace(art.metrics["ndcg@10"], fingerprint="f" * 64),
                },
            ),
            "define metric 'ndcg@10' differently",
        ),
        (
            lambda art: edited(
                art, metrics={k: v for k, v in art.metrics.items() if k != "recall@1"}
            ),
            "computed different metrics",
        ),
        (
            lambda art: edited(art, result=dataclasses.replace(art.result, name="other")),
            "runs of different targets ('ranker' vs 'other')",
        ),
    ],
)
def test_merge_refuses_other_defects(
    change: Callable[[RunArtifact], RunArtifact], expected: str
) -> None:
    a, b = all_shards(goldens(9), 2)
    assert expected in refusal([a, change(b)])


def test_a_client_metric_registered_after_import_shards_and_merges() -> None:
    @register_metric("first_is_relevant", higher_is_better=True)
    def first_is_relevant(response: Any, case: GoldenCase) -> float:
        return float(response.ranked_ids[0] in case.relevant)

    gs = goldens(10)
    metrics = ["first_is_relevant"]
    arts = []
    for i in (1, 2):
        art = build_artifact(
            evaluate(TARGET, select_shard(gs, ShardSpec(i, 2)), metrics),
            metrics,
            goldens=GoldensInfo(gs.fingerprint(), gs.case_fingerprints()),
            git=(None, None),
            config_fingerprint="c",
            shard=f"{i}/2",
        )
        arts.append(art)
    merged = merge(arts)
    assert merged.result.mean("first_is_relevant") == evaluate(TARGET, gs, metrics).mean(
        "first_is_relevant"
    )


# --- the documented CI matrix -------------------------------------------------------------

DOCS = Path(__file__).resolve().parents[2] / "docs" / "sharding.md"


def documented_workflow() -> str:
    text = DOCS.read_text(encoding="utf-8")
    start = text.index("```yaml\n") + len("```yaml\n")
    return text[start : text.index("```", start)]


def test_the_documented_workflow_runs_every_shard_and_gates_on_the_merge() -> None:
    import yaml

    workflow = yaml.safe_load(documented_workflow())
    shard_job, gate_job = workflow["jobs"]["shard"], workflow["jobs"]["gate"]
    shards = shard_job["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, len(shards) + 1))  # numbered from 1, as --shard wants
    run_step = next(s for s in shard_job["steps"] if "evalkit run" in s.get("run", ""))
    assert '--shard "$SHARD/$SHARDS"' in run_step["run"]
    assert run_step["env"]["SHARDS"] == "${{ strategy.job-total }}"
    parse_shard(f"{shards[-1]}/{len(shards)}")  # the last job's spec is valid
    assert gate_job["needs"] == "shard"
    commands = [s.get("run", "") for s in gate_job["steps"]]
    merge_at = next(i for i, c in enumerate(commands) if c.startswith("evalkit merge"))
    gate_at = next(i for i, c in enumerate(commands) if c.startswith("evalkit gate"))
    assert merge_at < gate_at
    assert "--candidate candidate.json" in commands[gate_at]


def test_the_documented_workflow_is_schema_valid(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / "eval.yml"
    path.write_text(documented_workflow(), encoding="utf-8")
    schema = ["--builtin-schema", "vendor.github-workflows"]
    checked = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", *schema, str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
