"""`evalkit history` and `evalkit pin` over the local file store's promotions."""

from __future__ import annotations

import json
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from evalkit._spec.artifact import write_artifact
from helpers.cli import evalkit, write_files
from helpers.history_runs import run, sha_of
from helpers.tiny_project import CHECKS, CONFIG, GOLDENS, TARGET_MODULE, one_line_error

WITH_BASELINE = CONFIG + "baseline: {path: baseline.json}\n"
# A CI job's own GitHub variables must not make these runs call GitHub.
NO_GITHUB = {"GITHUB_TOKEN": "", "GH_TOKEN": "", "GITHUB_REPOSITORY": ""}
IDS = [f"c{i:02d}" for i in range(12)]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    files = {"tiny_target.py": TARGET_MODULE, "goldens.jsonl": GOLDENS, "checks.yaml": CHECKS}
    return write_files(tmp_path, {**files, "evalkit.yaml": WITH_BASELINE})


def promote(project: Path, k: int, sha: str | None = None) -> None:
    """Promote a run whose every case scores 0.01·k more than run 0 (so each Δ is +0.01)."""
    values = {cid: {"ndcg@10": 0.3 + 0.05 * (i % 4) + 0.01 * k} for i, cid in enumerate(IDS)}
    path = write_artifact(run(f"r{k}", values, sha=sha or sha_of(k)), project / f"r{k}.json")
    done = evalkit("promote", path.name, cwd=project)
    assert done.returncode == 0, done.stderr


def test_history_lists_promotions_and_the_checked_metrics_trend(project: Path) -> None:
    empty = evalkit("history", cwd=project, env=NO_GITHUB)
    assert empty.returncode == 0, empty.stderr
    assert "no promotion kept yet" in empty.stdout
    assert "reference: missing: no reference pinned" in empty.stdout
    for k in range(3):
        promote(project, k)
    shown = evalkit("history", "--json", "h.json", cwd=project, env=NO_GITHUB)
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert "3 promotion(s) kept in" in out
    for k in range(3):
        assert sha_of(k)[:12] in out
    # the checks file compares ndcg@10 with the baseline: that is the trend shown
    assert "ndcg@10 (higher is better)" in out
    assert "recall@1" not in out.split("ndcg@10 (higher", 1)[1]
    assert out.count("+0.0100  [+0.0100, +0.0100]") == 2
    doc = json.loads((project / "h.json").read_text())
    assert [p["sha"] for p in doc["promotions"]] == [sha_of(k) for k in range(3)]
    assert [p["config_fingerprint"] for p in doc["promotions"]] == ["cfg-1"] * 3
    steps = [p["step"] for p in doc["trends"][0]["points"]]
    assert steps[0] is None
    assert [s["delta"] for s in steps[1:]] == pytest.approx([0.01, 0.01], abs=1e-12)
    kept = sorted(p.name for p in (project / ".evalkit" / "history" / "evalkit").iterdir())
    assert "index.json" in kept
    assert len([k for k in kept if k.endswith(f"{sha_of(1)[:12]}.json")]) == 1


def test_pin_repin_and_pinning_what_is_not_kept(project: Path) -> None:
    for k in range(3):
        promote(project, k)
    pinned = evalkit("pin", "1 promotion ago", cwd=project)
    assert pinned.returncode == 0, pinned.stderr
    assert sha_of(1)[:12] in pinned.stdout
    promote(project, 3)  # a promotion does not move the pin
    shown = evalkit("history", "--candidate", "r0.json", cwd=project, env=NO_GITHUB)
    assert "reference: .evalkit/history/evalkit/reference.json: " in shown.stdout
    assert sha_of(1)[:12] in shown.stdout.split("reference:", 1)[1].splitlines()[0]
    # the candidate is the trend's last point: run 0 after run 3 is -0.03
    marked = [line for line in shown.stdout.splitlines() if line.endswith("<- reference")]
    assert len(marked) == 1
    assert sha_of(1)[:12] in marked[0]
    assert "candidate" in shown.stdout
    assert "-0.0300  [-0.0300, -0.0300]" in shown.stdout
    repinned = evalkit("pin", "0", cwd=project)
    assert repinned.returncode == 0, repinned.stderr
    assert sha_of(3)[:12] in repinned.stdout
    reference = project / ".evalkit" / "history" / "evalkit" / "reference.json"
    assert json.loads(reference.read_text())["git"]["commit"] == sha_of(3)
    too_far = evalkit("pin", "9 promotions ago", cwd=project)
    one_line_error(too_far, 2, "cannot pin 9 promotions ago: only 4 promotion(s) are kept")
    nonsense = evalkit("pin", "next tuesday", cwd=project)
    one_line_error(nonsense, 2, "evalkit pin: 'next tuesday' is neither")


def test_pin_says_reference_once_and_a_date_takes_that_days_last_promotion(
    project: Path,
) -> None:
    promote(project, 0)
    promote(project, 1)  # the same day as the first
    today = datetime.now(UTC).date().isoformat()
    pinned = evalkit("pin", today, cwd=project)
    assert pinned.returncode == 0, pinned.stderr
    assert sha_of(1)[:12] in pinned.stdout
    assert sha_of(0)[:12] not in pinned.stdout
    assert pinned.stdout.startswith("pinned the reference in ")
    # the file is reference.json; the sentence around it names the reference once
    words = re.sub(r"\S*reference\.json", "FILE", pinned.stdout)
    assert words.count("reference") == 1, pinned.stdout
    ago = evalkit("pin", "1 promotions ago", cwd=project)
    assert ago.returncode == 0, ago.stderr
    assert re.sub(r"\S*reference\.json", "FILE", ago.stdout).count("reference") == 1


def test_the_docs_say_which_promotion_a_pinned_date_takes() -> None:
    cli = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    pin = cli.split("## `evalkit pin`", 1)[1].split("\n## ", 1)[0]
    assert "the last promotion made on or before that day (UTC)" in " ".join(pin.split())


def git(project: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", *args],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_pin_a_tag_of_the_local_repository(project: Path) -> None:
    git(project, "init", "-q")
    git(project, "commit", "-q", "--allow-empty", "-m", "one")
    git(project, "tag", "-a", "v1.0", "-m", "release 1.0")
    tagged = git(project, "rev-parse", "HEAD")
    promote(project, 0, sha=tagged)
    promote(project, 1)
    pinned = evalkit("pin", "v1.0", cwd=project)
    assert pinned.returncode == 0, pinned.stderr
    assert f"the promotion of tag v1.0 ({tagged[:12]})" in pinned.stdout
    missing = evalkit("pin", "tag:v2.0", cwd=project)
    one_line_error(missing, 2, "tag or release 'v2.0' does not exist")


def test_github_stores_are_pinned_by_the_action(project: Path) -> None:
    (project / "evalkit.yaml").write_text(CONFIG + "baseline: {store: branch}\n")
    refused = evalkit("pin", "0", cwd=project)
    one_line_error(refused, 2, "baseline.store is 'branch'", "mode: pin")
    shown = evalkit("history", cwd=project, env=NO_GITHUB)
    assert shown.returncode == 0, shown.stderr
    assert "only the GitHub Action reads" in shown.stdout
    assert "reference: missing" in shown.stdout


def make_store_branch(project: Path, tmp_path: Path) -> Path:
    """Three promotions and a pin on branch evalkit-baselines, as the Action leaves it."""
    from datetime import timedelta

    from evalkit._store.history import PinRecord, PromotionRecord, index_dumps
    from helpers.history_runs import T0

    (project / "evalkit.yaml").write_text(CONFIG + "baseline: {store: branch}\n")
    git(project, "init", "-q")
    git(project, "commit", "-q", "--allow-empty", "-m", "code")
    # the store branch as the Action left it, in another clone
    store = tmp_path / "store-clone"
    store.mkdir()
    git(store, "init", "-q", "-b", "evalkit-baselines")
    records = []
    for k in range(3):
        values = {cid: {"ndcg@10": 0.4 + 0.02 * k} for cid in IDS}
        path = write_artifact(run(f"r{k}", values, sha=sha_of(k)), store / "x.json")
        (store / sha_of(k)).mkdir()
        path.rename(store / sha_of(k) / "evalkit.json")
        records.append(
            PromotionRecord(f"{sha_of(k)}/evalkit.json", sha_of(k), T0 + timedelta(days=k), "f")
        )
    (store / "history").mkdir()
    (store / "history" / "evalkit.json").write_bytes(index_dumps("evalkit", records))
    (store / "reference").mkdir()
    (store / "reference" / "evalkit.json").write_bytes(
        (store / sha_of(0) / "evalkit.json").read_bytes()
    )
    pin = PinRecord("2 promotions ago", "2 promotion(s) ago", sha_of(0), T0, "f", T0)
    (store / "reference" / "evalkit.pin.json").write_text(pin.to_json())
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "promotions")
    return store


def test_history_reads_a_fetched_store_branch(project: Path, tmp_path: Path) -> None:
    store = make_store_branch(project, tmp_path)
    before = evalkit("history", cwd=project, env=NO_GITHUB)
    assert "git fetch origin evalkit-baselines" in before.stdout
    git(
        project,
        "fetch",
        "-q",
        str(store),
        "evalkit-baselines:refs/remotes/origin/evalkit-baselines",
    )
    shown = evalkit("history", cwd=project, env=NO_GITHUB)
    assert shown.returncode == 0, shown.stderr
    assert "3 promotion(s) from branch evalkit-baselines (local origin/evalkit-baselines)" in (
        shown.stdout
    )
    assert shown.stdout.count("+0.0200  [+0.0200, +0.0200]") == 2
    assert f"reference: branch evalkit-baselines:reference/evalkit.json: {sha_of(0)[:12]}" in (
        shown.stdout
    )


def test_the_gate_writes_a_fetched_reference_under_evalkit_fetched(
    project: Path, tmp_path: Path
) -> None:
    store = make_store_branch(project, tmp_path)
    (project / "checks.yaml").write_text(
        CHECKS + "  - id: drift\n    metric: ndcg@10\n    vs_reference: no_significant_regression\n"
    )
    fetch = ("fetch", "-q", str(store), "evalkit-baselines:refs/remotes/origin/evalkit-baselines")
    git(project, *fetch)
    before = sorted(p.name for p in project.iterdir())
    gated = evalkit("gate", cwd=project, env=NO_GITHUB)
    assert gated.returncode in (0, 1), gated.stderr
    assert "branch evalkit-baselines:reference/evalkit.json" in gated.stdout
    # nothing beside the user's files but the run artefact the gate always writes
    added = sorted({p.name for p in project.iterdir()} - set(before))
    assert [name for name in added if "reference" in name] == []
    fetched = project / ".evalkit" / "fetched" / "reference-evalkit.json"
    assert fetched.read_bytes() == (store / "reference" / "evalkit.json").read_bytes()


def test_keep_promotions_bounds_the_file_stores_history_and_keeps_the_pinned_reference(
    tmp_path: Path,
) -> None:
    files = {"tiny_target.py": TARGET_MODULE, "goldens.jsonl": GOLDENS, "checks.yaml": CHECKS}
    config = CONFIG + "baseline: {path: baseline.json, keep_promotions: 2}\n"
    project = write_files(tmp_path, {**files, "evalkit.yaml": config})
    promote(project, 0)
    pinned = evalkit("pin", "0 promotions ago", cwd=project, env=NO_GITHUB)
    assert pinned.returncode == 0, pinned.stderr
    for k in range(1, 4):
        promote(project, k)
    shown = evalkit("history", "--json", "h.json", cwd=project, env=NO_GITHUB)
    assert shown.returncode == 0, shown.stderr
    assert "2 promotion(s) kept in" in shown.stdout
    assert "deleted" not in shown.stdout  # pruned, not lost
    doc = json.loads((project / "h.json").read_text())
    assert [p["sha"] for p in doc["promotions"]] == [sha_of(2), sha_of(3)]
    folder = project / ".evalkit" / "history" / "evalkit"
    kept = sorted(p.name for p in folder.iterdir() if p.name.endswith(".json"))
    assert not [k for k in kept if sha_of(0)[:12] in k or sha_of(1)[:12] in k]
    # the reference pinned to the first promotion is a copy: still there, still read
    assert (folder / "reference.json").is_file()
    reference_line = next(line for line in shown.stdout.splitlines() if "reference" in line)
    assert "missing" not in reference_line, shown.stdout
    assert sha_of(0)[:7] in reference_line, shown.stdout


@pytest.mark.parametrize(
    ("baseline", "needle"),
    [
        ("{store: artifact, keep_promotions: 5}", "keep_promotions bounds the history"),
        ("{path: baseline.json, keep_promotions: 0}", "keep_promotions"),
    ],
)
def test_keep_promotions_is_refused_where_it_cannot_hold(
    tmp_path: Path, baseline: str, needle: str
) -> None:
    files = {"tiny_target.py": TARGET_MODULE, "goldens.jsonl": GOLDENS, "checks.yaml": CHECKS}
    project = write_files(tmp_path, {**files, "evalkit.yaml": CONFIG + f"baseline: {baseline}\n"})
    one_line_error(evalkit("history", cwd=project, env=NO_GITHUB), 2, needle, "evalkit.yaml")
