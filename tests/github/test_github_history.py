"""Promotion history, pinning and the reference, per store, against the fake GitHub."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fake_github import (  # noqa: F401  (the *_fixture names register fixtures)
    FakeGitHub,
    fake_github_fixture,
    github_factory_for_tests,
    make_zip,
)

from evalkit._store.history import (
    PinRecord,
    PinSpec,
    PromotionRecord,
    TaggedCommit,
    index_dumps,
    index_loads,
    parse_pin,
)
from evalkit._store.protocol import (
    FetchRequest,
    GitHubAccess,
    HistoryRequest,
    PinRequest,
    PromoteRequest,
)
from evalkit.errors import ArtifactError, InputError
from evalkit.github.artifacts import ArtifactStore
from evalkit.github.branch_store import BranchStore
from evalkit.github.client import NO_DELAY

CONFIG = "evalkit"
T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def sha(i: int) -> str:
    return f"{i:x}" * 40


def artefact_bytes(i: int) -> bytes:
    return json.dumps(
        {"schema_version": 4, "n": i, "git": {"commit": sha(i)}, "config_fingerprint": f"cfg{i}"}
    ).encode()


def access_for(fake: FakeGitHub) -> GitHubAccess:
    repo = github_factory_for_tests(fake.api_url, fake.token).get_repo(fake.full_name)
    return GitHubAccess(
        repo=lambda: repo,
        repo_facts=lambda: (fake.repo_id, "main"),
        token=fake.token,
        retry=NO_DELAY,
    )


class Clock:
    def __init__(self) -> None:
        self.at = T0

    def __call__(self) -> datetime:
        moment = self.at
        self.at += timedelta(days=1)
        return moment


def promoted_branch(fake: FakeGitHub, tmp_path: Path, n: int) -> BranchStore:
    store = BranchStore(access_for(fake), sleep=lambda _s: None, now=Clock())
    for i in range(1, n + 1):
        fake.git.push("main", sha(i))  # each promotion follows the one before
        path = tmp_path / f"run{i}.json"
        path.write_bytes(artefact_bytes(i))
        store.promote(PromoteRequest(path, CONFIG, sha(i), tmp_path))
    return store


def pin(store: BranchStore | ArtifactStore, tmp_path: Path, text: str, **kw: object):  # type: ignore[no-untyped-def]
    return store.pin(
        PinRequest(
            CONFIG,
            parse_pin(text),
            tmp_path / "dl",
            tmp_path / "out",
            now=NOW,
            **kw,  # type: ignore[arg-type]
        )
    )


# ----------------------------------------------------------------------------- branch


def test_branch_store_keeps_every_promotion_with_commit_time_and_fingerprint(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    store = promoted_branch(fake_github, tmp_path, 4)
    history = store.history(HistoryRequest(CONFIG, tmp_path / "h"))
    assert [e.sha for e in history.entries] == [sha(i) for i in range(1, 5)]
    assert [e.promoted_at for e in history.entries] == [T0 + timedelta(days=i) for i in range(4)]
    assert [e.config_fingerprint for e in history.entries] == [f"cfg{i}" for i in range(1, 5)]
    assert [json.loads(e.path.read_bytes())["n"] for e in history.entries] == [1, 2, 3, 4]
    assert history.entries[0].label == f"{sha(1)[:7]} 2026-11-01"
    assert history.lost == 0
    # limit: the newest ones, and it says how many older ones it did not fetch
    newest = store.history(HistoryRequest(CONFIG, tmp_path / "h2", limit=2))
    assert [e.sha for e in newest.entries] == [sha(3), sha(4)]
    assert "2 older one(s) not fetched" in newest.detail


def test_branch_store_history_survives_a_race(fake_github: FakeGitHub, tmp_path: Path) -> None:
    store = promoted_branch(fake_github, tmp_path, 1)
    # another job promotes between our read of the head and our ref update
    git = fake_github.git

    def other_job() -> None:
        index = index_loads(git.file_at("evalkit-baselines", "history/evalkit.json"), "index")
        theirs = PromotionRecord(f"{sha(9)}/evalkit.json", sha(9), T0, "cfg9")
        git.commit_files(
            "evalkit-baselines",
            {
                f"{sha(9)}/evalkit.json": artefact_bytes(9),
                "history/evalkit.json": index_dumps(CONFIG, [*index, theirs]),
            },
        )

    fake_github.before("PATCH", r"/git/refs/heads/evalkit-baselines$", other_job)
    mine = tmp_path / "mine.json"
    mine.write_bytes(artefact_bytes(2))
    fake_github.git.push("main", sha(2))
    store.promote(PromoteRequest(mine, CONFIG, sha(2), tmp_path))
    history = store.history(HistoryRequest(CONFIG, tmp_path / "h"))
    assert [e.sha for e in history.entries] == [sha(1), sha(9), sha(2)]


def test_branch_store_pin_repin_and_reference(fake_github: FakeGitHub, tmp_path: Path) -> None:
    store = promoted_branch(fake_github, tmp_path, 5)
    request = FetchRequest(CONFIG, tmp_path / "ref")
    before = store.fetch_reference(request)
    assert before.status == "missing"
    assert before.path is None
    assert "no reference pinned" in before.detail
    assert "mode: pin" in before.detail

    result = pin(store, tmp_path, "3 promotions ago")
    assert result.record.sha == sha(2)
    assert result.location == "evalkit-baselines:reference/evalkit.json"
    ref = store.fetch_reference(request)
    assert ref.found
    assert ref.sha == sha(2)
    assert ref.path is not None
    assert json.loads(ref.path.read_bytes())["n"] == 2
    assert "3 promotion(s) ago" in ref.detail

    # a later promotion does not move the pin ...
    path = tmp_path / "run6.json"
    path.write_bytes(artefact_bytes(6))
    store.promote(PromoteRequest(path, CONFIG, sha(6), tmp_path))
    assert store.fetch_reference(request).sha == sha(2)
    # ... re-pinning does
    pin(store, tmp_path, "2026-11-04")
    again = store.fetch_reference(request)
    assert again.sha == sha(4)
    assert again.path is not None
    assert json.loads(again.path.read_bytes())["n"] == 4
    record = PinRecord.from_json(
        fake_github.git.file_at("evalkit-baselines", "reference/evalkit.pin.json") or b"", "pin"
    )
    assert record.spec == "2026-11-04"
    assert record.pinned_at == NOW


def test_branch_store_pins_a_tag(fake_github: FakeGitHub, tmp_path: Path) -> None:
    store = promoted_branch(fake_github, tmp_path, 3)
    tags = {"v1.0": TaggedCommit(sha(2), None)}
    result = pin(store, tmp_path, "v1.0", resolve_tag=tags.get)
    assert result.record.sha == sha(2)
    with pytest.raises(InputError, match="does not exist"):
        pin(store, tmp_path, "v9", resolve_tag=tags.get)


def test_branch_store_without_a_history_yet(fake_github: FakeGitHub, tmp_path: Path) -> None:
    store = BranchStore(access_for(fake_github), sleep=lambda _s: None)
    history = store.history(HistoryRequest(CONFIG, tmp_path))
    assert history.entries == ()
    with pytest.raises(InputError, match="no promotion is recorded yet"):
        pin(store, tmp_path, "0")
    # promoted before evalkit kept an index: latest alone is listed, and it says so
    fake_github.git.commit_files(
        "evalkit-baselines",
        {"latest/evalkit.json": artefact_bytes(7), "latest/evalkit.sha": (sha(7) + "\n").encode()},
    )
    legacy = store.history(HistoryRequest(CONFIG, tmp_path))
    assert [e.sha for e in legacy.entries] == [sha(7)]
    assert "only latest is listed" in legacy.detail


def test_branch_store_without_github_says_so(tmp_path: Path) -> None:
    store = BranchStore(None)
    assert store.history(HistoryRequest(CONFIG, tmp_path)).entries == ()
    ref = store.fetch_reference(FetchRequest(CONFIG, tmp_path))
    assert ref.status == "missing"
    assert "--reference PATH" in ref.detail


# ----------------------------------------------------------------------------- artifact


def artifact_store(fake: FakeGitHub, now: datetime = NOW) -> ArtifactStore:
    return ArtifactStore(access_for(fake), name="evalkit-baseline", now=lambda: now)


def seed_promotions(fake: FakeGitHub, n: int, *, expired: int = 0) -> None:
    for i in range(1, n + 1):
        created = (T0 + timedelta(days=i - 1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        fake.add_artifact(
            make_zip({f"{CONFIG}.json": artefact_bytes(i)}),
            head_sha=sha(i),
            created_at=created,
            expired=i <= expired,
            expires_at="2026-11-20T00:00:00Z" if i <= expired else "2999-01-01T00:00:00Z",
        )


def test_artifact_store_history_is_what_retention_left_and_says_so(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    seed_promotions(fake_github, 5, expired=2)
    # a fork's and a PR's upload under the same name are never history
    fake_github.add_artifact(make_zip({f"{CONFIG}.json": artefact_bytes(8)}), event="pull_request")
    fake_github.add_artifact(
        make_zip({f"{CONFIG}.json": artefact_bytes(9)}), head_repository_id=999
    )
    history = artifact_store(fake_github).history(HistoryRequest(CONFIG, tmp_path))
    assert [e.sha for e in history.entries] == [sha(3), sha(4), sha(5)]
    assert [e.config_fingerprint for e in history.entries] == ["cfg3", "cfg4", "cfg5"]
    assert history.entries[0].promoted_at == T0 + timedelta(days=2)
    assert history.lost == 2
    assert "2 older promotion(s) expired" in history.detail
    assert "artifact retention" in history.detail
    assert "baseline-store: branch" in history.detail


def test_artifact_store_pin_leaves_an_upload_and_reads_it_back(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    seed_promotions(fake_github, 4)
    store = artifact_store(fake_github)
    request = FetchRequest(CONFIG, tmp_path / "ref")
    assert store.fetch_reference(request).status == "missing"
    result = pin(store, tmp_path, "1 promotion ago")
    assert result.record.sha == sha(3)
    assert result.record.config_fingerprint == "cfg3"
    # chosen from the listing: only the pinned promotion is downloaded
    assert len(fake_github.api_calls("GET", "/zip")) == 1
    assert result.upload_name == "evalkit-baseline-reference"
    assert result.upload_dir is not None
    files = sorted(p.name for p in result.upload_dir.iterdir())
    assert files == ["evalkit.json", "evalkit.pin.json"]
    # what actions/upload-artifact would upload, from a manual (workflow_dispatch) run
    archive = make_zip({p.name: p.read_bytes() for p in result.upload_dir.iterdir()})
    fake_github.add_artifact(
        archive, name="evalkit-baseline-reference", event="workflow_dispatch", head_sha=sha(9)
    )
    ref = store.fetch_reference(request)
    assert ref.found
    assert ref.sha == sha(3)  # the pinned promotion's commit, not the pinning run's
    assert ref.path is not None
    assert json.loads(ref.path.read_bytes())["n"] == 3


def test_artifact_reference_from_a_pr_run_is_never_used(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    pinned = make_zip(
        {
            f"{CONFIG}.json": artefact_bytes(1),
            f"{CONFIG}.pin.json": PinRecord("0 promotions ago", "x", sha(1), T0, None, NOW)
            .to_json()
            .encode(),
        }
    )
    fake_github.add_artifact(pinned, name="evalkit-baseline-reference", event="pull_request")
    fake_github.add_artifact(pinned, name="evalkit-baseline-reference", head_branch="feature")
    ref = artifact_store(fake_github).fetch_reference(FetchRequest(CONFIG, tmp_path))
    assert ref.status == "missing"


def test_an_expired_reference_is_an_answer(fake_github: FakeGitHub, tmp_path: Path) -> None:
    pinned = make_zip({f"{CONFIG}.json": artefact_bytes(1)})
    fake_github.add_artifact(
        pinned,
        name="evalkit-baseline-reference",
        event="workflow_dispatch",
        expired=True,
        expires_at="2026-11-20T00:00:00Z",
    )
    ref = artifact_store(fake_github).fetch_reference(FetchRequest(CONFIG, tmp_path))
    assert ref.status == "expired"
    assert ref.path is None
    assert "expired on 2026-11-20" in ref.detail
    assert "re-pin" in ref.detail


def test_pin_spec_reads_back_from_the_record() -> None:
    record = PinRecord(PinSpec("ago", ago=2).text(), "why", None, None, None, NOW)
    assert parse_pin(record.spec) == PinSpec("ago", ago=2)


def test_branch_repin_across_compression_leaves_one_reference(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    import gzip

    store = BranchStore(access_for(fake_github), sleep=lambda _s: None, now=Clock())
    packed = tmp_path / "run1.json.gz"
    packed.write_bytes(gzip.compress(artefact_bytes(1)))
    fake_github.git.push("main", sha(1))
    fake_github.git.push("main", sha(2))
    store.promote(PromoteRequest(packed, CONFIG, sha(1), tmp_path))
    plain = tmp_path / "run2.json"
    plain.write_bytes(artefact_bytes(2))
    store.promote(PromoteRequest(plain, CONFIG, sha(2), tmp_path))
    git = fake_github.git
    pin(store, tmp_path, "1 promotion ago")
    assert git.file_at("evalkit-baselines", "reference/evalkit.json.gz") is not None
    pin(store, tmp_path, "0")
    assert git.file_at("evalkit-baselines", "reference/evalkit.json.gz") is None
    assert git.file_at("evalkit-baselines", "reference/evalkit.json") == artefact_bytes(2)
    ref = store.fetch_reference(FetchRequest(CONFIG, tmp_path / "ref"))
    assert ref.sha == sha(2)


def test_branch_pin_of_a_deleted_promotion_is_refused(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    store = promoted_branch(fake_github, tmp_path, 2)
    git = fake_github.git
    head = git.refs["heads/evalkit-baselines"]
    entries = dict(git.trees[git.commits[head]["tree"]])
    del entries[f"{sha(1)}/evalkit.json"]
    git.refs["heads/evalkit-baselines"] = git.put_commit("prune", git.put_tree(entries), [head])
    with pytest.raises(ArtifactError, match="listed in history/evalkit.json but was deleted"):
        pin(store, tmp_path, "1")
    history = store.history(HistoryRequest(CONFIG, tmp_path / "h"))
    assert [e.sha for e in history.entries] == [sha(2)]
    assert history.lost == 1
    assert "1 listed but deleted" in history.detail


def test_a_reference_artifact_without_its_pin_record_is_not_read_with_a_stale_one(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    record = PinRecord("0 promotions ago", "the latest promotion", sha(1), T0, None, NOW)
    good = make_zip(
        {f"{CONFIG}.json": artefact_bytes(1), f"{CONFIG}.pin.json": record.to_json().encode()}
    )
    fake_github.add_artifact(
        good, name="evalkit-baseline-reference", created_at="2024-05-01T00:00:00Z"
    )
    store = artifact_store(fake_github)
    request = FetchRequest(CONFIG, tmp_path)
    assert store.fetch_reference(request).sha == sha(1)
    # a newer upload lacking the record: the older, complete one is used, not its left-over
    fake_github.add_artifact(
        make_zip({f"{CONFIG}.json": artefact_bytes(2)}),
        name="evalkit-baseline-reference",
        created_at="2024-05-02T00:00:00Z",
    )
    ref = store.fetch_reference(request)
    assert ref.sha == sha(1)
    assert ref.path is not None
    assert json.loads(ref.path.read_bytes())["n"] == 1


def test_history_view_with_the_actions_store(fake_github: FakeGitHub, tmp_path: Path) -> None:
    """The Action hands its own store (with GitHub access) to evalkit history's view."""
    from evalkit._app.promotions import history_view
    from evalkit._spec.artifact import write_artifact
    from evalkit._spec.config import load_config
    from helpers.history_runs import run

    (tmp_path / "checks.yaml").write_text(
        "checks:\n  - id: d\n    metric: ndcg@10\n    vs_baseline: no_significant_regression\n"
    )
    (tmp_path / "evalkit.yaml").write_text(
        "name: evalkit\ngoldens: g.jsonl\nchecks: checks.yaml\nmetrics: [ndcg@10]\n"
        "target:\n  python: 'x:y'\nbaseline: {store: branch}\n"
    )
    store = BranchStore(access_for(fake_github), sleep=lambda _s: None, now=Clock())
    for k in range(3):
        values = {f"c{i}": {"ndcg@10": 0.5 + 0.01 * k + 0.01 * (i % 3)} for i in range(9)}
        path = write_artifact(run(f"r{k}", values, sha=sha(k + 1)), tmp_path / f"r{k}.json")
        fake_github.git.push("main", sha(k + 1))
        store.promote(PromoteRequest(path, CONFIG, sha(k + 1), tmp_path))
    view = history_view(
        load_config(tmp_path / "evalkit.yaml"), store=store, work=tmp_path / "w", n_resamples=200
    )
    assert [e.sha for e in view.history.entries] == [sha(1), sha(2), sha(3)]
    (trend,) = view.trends
    deltas = [p.step.delta for p in trend.points if p.step is not None]
    assert deltas == pytest.approx([0.01, 0.01], abs=1e-12)
    assert view.reference.status == "missing"


def test_cli_history_reads_the_artifact_store_with_a_token(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    """GITHUB_TOKEN + GITHUB_REPOSITORY (+ GITHUB_API_URL): evalkit history asks the API."""
    from evalkit._spec.artifact import write_artifact
    from helpers.cli import evalkit
    from helpers.history_runs import run

    for i in range(1, 4):
        values = {f"c{k}": {"ndcg@10": 0.5 + 0.01 * i + 0.01 * (k % 3)} for k in range(9)}
        art = run(f"r{i}", values, sha=sha(i), config_fingerprint=f"cfg{i}")
        path = write_artifact(art, tmp_path / f"r{i}.json")
        fake_github.add_artifact(
            make_zip({f"{CONFIG}.json": path.read_bytes()}),
            head_sha=sha(i),
            created_at=f"2026-11-0{i}T12:00:00Z",
            expired=i == 1,
            expires_at="2026-11-20T00:00:00Z" if i == 1 else "2999-01-01T00:00:00Z",
        )
    (tmp_path / "checks.yaml").write_text(
        "checks:\n  - {id: d, metric: ndcg@10, vs_baseline: no_significant_regression}\n"
    )
    (tmp_path / "evalkit.yaml").write_text(
        f"name: {CONFIG}\ngoldens: g.jsonl\nchecks: checks.yaml\nmetrics: [ndcg@10]\n"
        "target:\n  python: 'x:y'\n"
    )
    env = {
        "GITHUB_TOKEN": fake_github.token,
        "GH_TOKEN": "",
        "GITHUB_REPOSITORY": fake_github.full_name,
        "GITHUB_API_URL": fake_github.api_url,
    }
    shown = evalkit("history", "--json", "h.json", cwd=tmp_path, env=env)
    assert shown.returncode == 0, shown.stderr
    assert "1 older promotion(s) expired" in shown.stdout
    doc = json.loads((tmp_path / "h.json").read_text())
    assert [p["sha"] for p in doc["promotions"]] == [sha(2), sha(3)]
    assert [p["config_fingerprint"] for p in doc["promotions"]] == ["cfg2", "cfg3"]
    assert doc["lost"] == 1
    assert doc["reference"]["status"] == "missing"
    (trend,) = doc["trends"]
    assert trend["points"][1]["step"]["delta"] == pytest.approx(0.01, abs=1e-12)
    # without the variables it says where it would look, and calls nothing
    calls = len(fake_github.requests)
    offline = evalkit(
        "history", cwd=tmp_path, env={"GITHUB_TOKEN": "", "GH_TOKEN": "", "GITHUB_REPOSITORY": ""}
    )
    assert offline.returncode == 0, offline.stderr
    assert "only the GitHub Action can read" in offline.stdout
    assert len(fake_github.requests) == calls


def test_branch_store_keeps_only_the_newest_promotions_and_the_pinned_reference(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    store = BranchStore(access_for(fake_github), sleep=lambda _s: None, now=Clock(), keep=2)
    for i in range(1, 3):
        fake_github.git.push("main", sha(i))
        path = tmp_path / f"run{i}.json"
        path.write_bytes(artefact_bytes(i))
        store.promote(PromoteRequest(path, CONFIG, sha(i), tmp_path))
    assert pin(store, tmp_path, "1 promotions ago").record.sha == sha(1)
    for i in range(3, 5):
        fake_github.git.push("main", sha(i))
        path = tmp_path / f"run{i}.json"
        path.write_bytes(artefact_bytes(i))
        store.promote(PromoteRequest(path, CONFIG, sha(i), tmp_path))
    history = store.history(HistoryRequest(CONFIG, tmp_path / "h"))
    assert [e.sha for e in history.entries] == [sha(3), sha(4)]
    assert history.lost == 0  # pruned promotions leave the index, not dangling entries
    git = fake_github.git
    for i in (1, 2):
        assert git.file_at("evalkit-baselines", f"{sha(i)}/evalkit.json") is None
    assert git.file_at("evalkit-baselines", f"{sha(4)}/evalkit.json") is not None
    # the pinned reference is its own copy: pruning its promotion never loses it
    fetched = store.fetch_reference(FetchRequest(CONFIG, tmp_path / "ref"))
    assert fetched.path is not None
    assert json.loads(fetched.path.read_bytes())["n"] == 1
