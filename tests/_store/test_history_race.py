"""Two promotions at once keep both history entries, and each records its own bytes (#48).

The read-modify-write window of the history index is widened by a hook, not a sleep: the
first promotion stops inside it until the second has either finished (no lock: the race
is open, and the first then writes an index without the second's entry) or is waiting
for the lock (the fix).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from evalkit._spec.artifact import write_artifact
from evalkit._store import file_store, history
from evalkit._store.file_store import FileStore
from evalkit._store.protocol import PromoteRequest
from evalkit._util import atomic
from helpers.history_runs import T0, run, sha_of

BOUND_S = 60.0  # promotions take milliseconds; this only bounds a broken run


def _waiting_for_a_lock(thread: threading.Thread) -> bool:
    """Whether ``thread`` is inside filelock's acquire (blocked on a lock file)."""
    frame = sys._current_frames().get(thread.ident or -1)
    while frame is not None:
        if frame.f_code.co_name == "acquire" and "filelock" in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False


def _until(condition: Callable[[], bool], what: str) -> None:
    done = threading.Event()
    for _ in range(int(BOUND_S / 0.01)):
        if condition():
            return
        done.wait(0.01)
    raise AssertionError(f"not seen within {BOUND_S:g} s: {what}")


def test_two_overlapping_promotions_both_stay_in_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = FileStore(tmp_path / "baseline.json", tmp_path / "history", "cfg")
    first = threading.current_thread()
    in_window = threading.Event()
    second_done = threading.Event()
    errors: list[BaseException] = []
    real_pruned = history.pruned

    def second() -> None:
        try:
            log.keep(b"{}", sha_of(2), T0 + timedelta(1))
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
        finally:
            second_done.set()

    other = threading.Thread(target=second)

    def widened(*args: object, **kwargs: object) -> object:
        # The first promotion has read the index and not yet written it back.
        if threading.current_thread() is first and not in_window.is_set():
            in_window.set()
            other.start()
            _until(
                lambda: second_done.is_set() or _waiting_for_a_lock(other),
                "the second promotion finishing or waiting for the history's lock",
            )
        return real_pruned(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(history, "pruned", widened)
    log.keep(b"{}", sha_of(1), T0)
    other.join(BOUND_S)
    assert not other.is_alive(), "the second promotion never finished"
    assert errors == []
    assert in_window.is_set()
    assert sorted(e.sha or "" for e in log.history().entries) == [sha_of(1), sha_of(2)]


def test_the_file_store_keeps_the_bytes_it_wrote_not_what_the_file_holds_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ours = write_artifact(run("ours", {"q1": {"recall@1": 1.0}}, sha=sha_of(1)), tmp_path / "o")
    theirs = write_artifact(run("other", {"q1": {"recall@1": 0.0}}, sha=sha_of(2)), tmp_path / "t")
    store = FileStore(tmp_path / "baseline.json", tmp_path / "h", "cfg")
    real_write = atomic.write_bytes_atomic

    def then_another_promotion(path: Path, data: bytes) -> Path:
        written = real_write(path, data)
        if path == store.path:  # not the history's own files
            real_write(path, theirs.read_bytes())  # a racing promotion replaces the file
        return written

    monkeypatch.setattr(file_store, "write_bytes_atomic", then_another_promotion)
    store.promote(PromoteRequest(ours, "cfg", sha_of(1), tmp_path))
    (entry,) = store.history().entries
    assert entry.path.read_bytes() == ours.read_bytes()
    assert entry.sha == sha_of(1)
