"""Promotion history records and choosing the pinned reference."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from evalkit._store.history import (
    HistoryEntry,
    PinRecord,
    PinSpec,
    TaggedCommit,
    entry_label,
    make_entry,
    parse_pin,
    select_pinned,
)
from evalkit.errors import ArtifactError, InputError
from helpers.history_runs import T0, sha_of


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("0", PinSpec("ago", ago=0)),
        ("3", PinSpec("ago", ago=3)),
        ("~3", PinSpec("ago", ago=3)),
        ("3 ago", PinSpec("ago", ago=3)),
        ("3 promotions ago", PinSpec("ago", ago=3)),
        ("1 Promotion ago", PinSpec("ago", ago=1)),
        ("2026-11-30", PinSpec("date", day=date(2026, 11, 30))),
        ("date:2026-11-30", PinSpec("date", day=date(2026, 11, 30))),
        ("v1.2.0", PinSpec("tag", tag="v1.2.0")),
        ("tag:v1.2.0", PinSpec("tag", tag="v1.2.0")),
        ("release:release/2026-11", PinSpec("tag", tag="release/2026-11")),
    ],
)
def test_parse_pin(text: str, spec: PinSpec) -> None:
    assert parse_pin(text) == spec
    assert parse_pin(spec.text()) == spec  # what is stored reads back the same


@pytest.mark.parametrize("text", ["", "  ", "2026-13-01", "a..b", "-v1", "tag:", "x y"])
def test_parse_pin_refuses_with_the_forms(text: str) -> None:
    with pytest.raises(InputError) as err:
        parse_pin(text, where="evalkit pin")
    assert str(err.value).startswith("evalkit pin: ")


def entries(n: int) -> list[HistoryEntry]:
    return [
        make_entry(
            Path(f"p{i}.json"),
            sha=sha_of(i),
            promoted_at=T0 + timedelta(days=i),
            config_fingerprint="cfg",
        )
        for i in range(n)
    ]


def test_label() -> None:
    assert entry_label("abcdef123456", T0) == "abcdef1 2026-11-01"
    assert entry_label(None, None) == "no-commit undated"


def test_n_promotions_ago_counts_from_the_newest() -> None:
    kept = entries(5)
    for n in range(5):
        chosen, _ = select_pinned(kept, PinSpec("ago", ago=n))
        assert chosen is kept[4 - n]
    with pytest.raises(InputError, match=r"only 5 promotion\(s\) are kept.*0-4"):
        select_pinned(kept, PinSpec("ago", ago=5))


def test_nothing_to_pin() -> None:
    with pytest.raises(InputError, match="no promotion is recorded yet"):
        select_pinned([], PinSpec("ago", ago=0))


def test_a_date_pins_the_baseline_in_effect_that_day() -> None:
    kept = entries(5)  # promoted Nov 1..5 at 12:00 UTC
    for day in range(1, 6):
        chosen, why = select_pinned(kept, PinSpec("date", day=date(2026, 11, day)))
        assert chosen is kept[day - 1]
        assert "in effect on" in why
    chosen, _ = select_pinned(kept, PinSpec("date", day=date(2027, 1, 1)))
    assert chosen is kept[-1]
    with pytest.raises(InputError, match="no promotion on or before 2026-10-31"):
        select_pinned(kept, PinSpec("date", day=date(2026, 10, 31)))


def test_a_tag_pins_its_commit_or_the_baseline_in_effect_then() -> None:
    kept = entries(5)
    tags = {
        "v1": TaggedCommit(sha_of(2), None),
        # a tag on a commit that was never promoted, made after the 4th promotion
        "v2": TaggedCommit("f" * 40, T0 + timedelta(days=3, hours=1)),
        "v0": TaggedCommit("e" * 40, T0 - timedelta(days=1)),
    }
    chosen, why = select_pinned(kept, PinSpec("tag", tag="v1"), tags.get)
    assert chosen is kept[2]
    assert sha_of(2)[:12] in why
    chosen, why = select_pinned(kept, PinSpec("tag", tag="v2"), tags.get)
    assert chosen is kept[3]
    assert "in effect when tag v2" in why
    with pytest.raises(InputError, match="no promotion matches tag 'v0'"):
        select_pinned(kept, PinSpec("tag", tag="v0"), tags.get)
    with pytest.raises(InputError, match="'nope' does not exist"):
        select_pinned(kept, PinSpec("tag", tag="nope"), tags.get)


def test_pin_record_round_trip() -> None:
    kept = entries(3)
    spec = PinSpec("ago", ago=1)
    chosen, why = select_pinned(kept, spec)
    now = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
    record = PinRecord.of(chosen, spec, why, now)
    assert PinRecord.from_json(record.to_json(), "pin.json") == record
    assert record.sha == sha_of(1)
    assert "pinned 2026-12-01T09:30:00+00:00" in record.describe()
    with pytest.raises(ArtifactError, match="pin.json: not valid JSON"):
        PinRecord.from_json("{", "pin.json")
    with pytest.raises(ArtifactError, match="not an evalkit pin record"):
        PinRecord.from_json("[]", "pin.json")


@pytest.mark.parametrize("seed", range(20))
def test_select_pinned_agrees_with_brute_force_on_generated_histories(seed: int) -> None:
    """Random promotion times (several a day, gaps of days) and every kind of spec."""
    import random

    rng = random.Random(seed)
    moment, kept = T0, []
    for i in range(rng.randint(1, 12)):
        moment += timedelta(hours=rng.choice([1, 5, 20, 50, 200]))
        kept.append(
            make_entry(Path(f"p{i}"), sha=sha_of(i), promoted_at=moment, config_fingerprint=None)
        )
    newest_first = kept[::-1]
    for n in range(len(kept) + 2):
        if n < len(kept):
            assert select_pinned(kept, PinSpec("ago", ago=n))[0] is newest_first[n]
        else:
            with pytest.raises(InputError):
                select_pinned(kept, PinSpec("ago", ago=n))
    first_day = kept[0].promoted_at.date()  # type: ignore[union-attr]
    for offset in range(-1, 20):
        day = first_day + timedelta(days=offset)
        # brute force: the last promotion whose UTC day is on or before ``day``
        on_or_before = [e for e in kept if e.promoted_at.date() <= day]  # type: ignore[union-attr]
        if on_or_before:
            assert select_pinned(kept, PinSpec("date", day=day))[0] is on_or_before[-1]
        else:
            with pytest.raises(InputError):
                select_pinned(kept, PinSpec("date", day=day))
    # a tag on a promoted commit is that promotion; on another commit, the one in effect then
    target = rng.randrange(len(kept))
    tags = {"t": TaggedCommit(sha_of(target), None)}
    assert select_pinned(kept, PinSpec("tag", tag="t"), tags.get)[0] is kept[target]
    promoted = kept[target].promoted_at
    assert promoted is not None
    when = promoted + timedelta(minutes=30)
    later = {"u": TaggedCommit("f" * 40, when)}
    in_effect = [e for e in kept if e.promoted_at is not None and e.promoted_at <= when][-1]
    assert select_pinned(kept, PinSpec("tag", tag="u"), later.get)[0] is in_effect


def test_the_index_is_one_promotion_per_line_and_an_indented_one_still_reads() -> None:
    import json

    from evalkit._store.history import PromotionRecord, index_dumps, index_loads

    records = [
        PromotionRecord("promotions/a.json", "a" * 40, T0, "fp1"),
        PromotionRecord("promotions/b — ü.json", None, None, None),
    ]
    data = index_dumps("evalkit", records)
    lines = data.decode("utf-8").splitlines()
    assert [line for line in lines if '"file"' in line] == [
        "  " + json.dumps(entry, ensure_ascii=False) + ("," if i == 0 else "")
        for i, entry in enumerate(json.loads(data)["promotions"])
    ]
    assert index_loads(data, "index") == records
    # what evalkit wrote before (#27): json.dumps(indent=1)
    assert index_loads(json.dumps(json.loads(data), indent=1).encode(), "index") == records
