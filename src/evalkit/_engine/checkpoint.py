"""The run checkpoint: every finished case, on disk the moment it finishes."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit._model.formats import CHECKPOINT_FORMAT, CHECKPOINT_VERSION
from evalkit._model.results import CaseResult
from evalkit._spec.artifact_rows import _parse_row, _row_dict
from evalkit._util import bounded as _bounded
from evalkit._util.atomic import fsync_dir, write_bytes_atomic
from evalkit.errors import ArtifactError, RuntimeFailure

if TYPE_CHECKING:
    from filelock import BaseFileLock

    from evalkit._model.golden_cases import GoldenSet
    from evalkit._spec.config import EvalkitConfig

TRIAL_KEY = "trial"

# The parts of evalkit.yaml that decide what a row contains.  Concurrency, rate
# limit, timeouts, checks, baseline and output do not, so they may change
# between an interrupted run and its resume.
_IDENTITY_KEYS = ("target", "metrics", "judge", "plugins")


def checkpoint_path(out: str | Path, root: str | Path) -> Path:
    """Where the checkpoint of a run writing ``out`` lives, under ``root``'s ``.evalkit/``."""
    target = Path(os.path.abspath(Path(out).expanduser()))
    digest = hashlib.sha256(os.fsencode(target)).hexdigest()[:12]
    return Path(root, ".evalkit", "checkpoints", f"{target.name}-{digest}.checkpoint.jsonl")


def config_fingerprint(config: EvalkitConfig) -> str:
    """SHA-256 of what the config says to run (not how fast or where to write it)."""
    doc = config.model_dump(mode="json", include=set(_IDENTITY_KEYS))
    if config.repeats != 1:  # rows are means over trials; one trial keeps the old hash
        doc["repeats"] = config.repeats
    text = json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class RunIdentity:
    """What a checkpoint's rows were produced by; a resume must match it exactly."""

    config: str
    goldens: str
    metrics: Mapping[str, str]  # metric name -> definition fingerprint
    shard: str | None = None

    def to_json(self) -> dict[str, Any]:
        # not dataclasses.asdict: it deep-copies the metric names, str subclasses that
        # carry their declaration (DeclaredMetric), and cannot rebuild them
        return {f.name: getattr(self, f.name) for f in fields(self)} | {
            "metrics": dict(self.metrics)
        }

    @classmethod
    def from_json(cls, doc: object, where: str) -> RunIdentity:
        if not isinstance(doc, dict):
            raise ArtifactError(f"{where}: header 'identity' is not an object")
        config, goldens, metrics, shard = (
            doc.get("config"),
            doc.get("goldens"),
            doc.get("metrics"),
            doc.get("shard"),
        )
        if not isinstance(config, str) or not isinstance(goldens, str):
            raise ArtifactError(f"{where}: header identity lacks the config/goldens fingerprints")
        if not isinstance(metrics, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metrics.items()
        ):
            raise ArtifactError(f"{where}: header identity 'metrics' must map names to strings")
        if shard is not None and not isinstance(shard, str):
            raise ArtifactError(f"{where}: header identity 'shard' must be a string or null")
        return cls(config, goldens, dict(metrics), shard)

    def differences(self, other: RunIdentity) -> list[str]:
        """How ``other`` (the current run) differs from this one (the checkpoint), in words."""
        out: list[str] = []
        if self.config != other.config:
            out.append("the config's target, metrics, judges or plugins changed")
        if self.goldens != other.goldens:
            out.append("the golden set changed")
        if list(self.metrics) != list(other.metrics):
            out.append(
                f"the metrics changed (checkpoint: {', '.join(self.metrics)}; "
                f"now: {', '.join(other.metrics)})"
            )
        else:
            redefined = [m for m in self.metrics if self.metrics[m] != other.metrics[m]]
            if redefined:
                out.append(f"the definition of {', '.join(redefined)} changed")
        if self.shard != other.shard:
            out.append(f"the shard changed (checkpoint: {self.shard}; now: {other.shard})")
        return out


@dataclass
class CheckpointContents:
    """What a checkpoint file holds: its identity and its rows, latest per case."""

    identity: RunIdentity
    rows: dict[str, CaseResult] = field(default_factory=dict)
    truncated_ids: set[str] = field(default_factory=set)
    good_bytes: int = 0  # length of the file up to the end of its last intact line
    torn: bool = False
    # repeats: k -- case id -> trial number -> that trial's row (latest line wins)
    trials: dict[str, dict[int, CaseResult]] = field(default_factory=dict)

    @property
    def completed(self) -> dict[str, CaseResult]:
        """Rows that succeeded: the cases a resume does not run again."""
        return {cid: row for cid, row in self.rows.items() if row.error is None}

    @property
    def failed(self) -> dict[str, CaseResult]:
        return {cid: row for cid, row in self.rows.items() if row.error is not None}

    @property
    def completed_trials(self) -> dict[str, dict[int, CaseResult]]:
        """Trials that succeeded, per case: the (case, trial) pairs a resume does not run."""
        good = {
            c: {t: r for t, r in rows.items() if r.error is None} for c, rows in self.trials.items()
        }
        return {c: rows for c, rows in good.items() if rows}

    @property
    def failed_trials(self) -> int:
        return sum(row.error is not None for rows in self.trials.values() for row in rows.values())

    @property
    def saved(self) -> int:
        """Finished results kept: succeeded rows, or succeeded trials of a repeated run."""
        return len(self.completed) + sum(len(t) for t in self.completed_trials.values())


def _trial_number(doc: object, where: str) -> int | None:
    """The ``trial`` of a checkpoint line (removed from ``doc``), or None for a plain row."""
    if not isinstance(doc, dict) or TRIAL_KEY not in doc:
        return None
    trial = doc.pop(TRIAL_KEY)
    if isinstance(trial, bool) or not isinstance(trial, int) or trial < 1:
        raise ArtifactError(f"{where}: 'trial' must be an integer >= 1, got {trial!r}")
    return trial


def read_checkpoint(path: str | Path) -> CheckpointContents | None:
    """Read a checkpoint; ``None`` when there is none (or not even a whole header)."""
    p = Path(path)
    try:
        data = _bounded.read_bytes(p)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ArtifactError(f"{p}: cannot read checkpoint: {exc.strerror or exc}") from None
    lines = data.split(b"\n")
    # Each entry: (line number, byte offset just past it, bytes).  The segment after
    # the final newline is empty for an intact file and a torn line otherwise.
    entries: list[tuple[int, int, bytes]] = []
    offset = 0
    for number, raw in enumerate(lines, 1):
        offset += len(raw) + (1 if number < len(lines) else 0)
        if raw.strip():
            entries.append((number, offset, raw))
    contents: CheckpointContents | None = None
    for position, (number, end, raw) in enumerate(entries):
        last = position == len(entries) - 1
        try:
            doc = _bounded.loads(raw.decode("utf-8"))
        except _bounded.JsonRefused as exc:  # whole, not torn: refused wherever it is
            raise ArtifactError(f"{p}:{number}: damaged checkpoint line ({exc.msg})") from None
        except (UnicodeDecodeError, ValueError):
            if last:  # a write cut short by a crash: that case just runs again
                if contents is not None:
                    contents.torn = True
                return contents
            raise ArtifactError(
                f"{p}:{number}: damaged checkpoint line (not JSON) before the last line; "
                f"the file was edited or corrupted: delete {p} to start the run over"
            ) from None
        if contents is None:
            contents = CheckpointContents(_parse_header(doc, f"{p}:{number}"), good_bytes=end)
            continue
        trial = _trial_number(doc, f"{p}:{number}")
        row, truncated = _parse_row(doc, position - 1, "target", f"{p}:{number}")
        assert isinstance(row, CaseResult)
        if trial is not None:
            contents.trials.setdefault(row.case_id, {})[trial] = row
        else:
            contents.rows.pop(row.case_id, None)  # re-insert: dict order follows the latest line
            contents.rows[row.case_id] = row
        if trial in (None, 1):  # a repeated run's merged row shows the first trial's output
            if truncated:
                contents.truncated_ids.add(row.case_id)
            else:
                contents.truncated_ids.discard(row.case_id)
        contents.good_bytes = end
    return contents


def _parse_header(doc: object, where: str) -> RunIdentity:
    if not isinstance(doc, dict) or doc.get("format") != CHECKPOINT_FORMAT:
        raise ArtifactError(
            f"{where}: not an evalkit checkpoint (its first line is not a checkpoint header); "
            "is --out pointing at the wrong file?"
        )
    version = doc.get("version")
    if version != CHECKPOINT_VERSION:
        raise ArtifactError(
            f"{where}: checkpoint version {version!r} is not supported by this evalkit "
            f"(reads version {CHECKPOINT_VERSION}); finish it with the evalkit that wrote it, "
            "or delete it to start over"
        )
    return RunIdentity.from_json(doc.get("identity"), where)


def _header_line(identity: RunIdentity) -> bytes:
    from evalkit._version import __version__

    header = {
        "format": CHECKPOINT_FORMAT,
        "version": CHECKPOINT_VERSION,
        "evalkit_version": __version__,
        "created_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "identity": identity.to_json(),
    }
    return (json.dumps(header, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def _unlock(lock: BaseFileLock) -> None:
    """Release ``lock`` and leave no lock file behind, whatever stopped the run."""
    Path(lock.lock_file).unlink(missing_ok=True)
    lock.release()


class Checkpoint:
    """An open checkpoint: the rows already finished, and :meth:`append` for new ones."""

    def __init__(
        self,
        path: Path,
        identity: RunIdentity,
        previous: CheckpointContents | None,
        lock: BaseFileLock,
    ) -> None:
        self.path = path
        self.identity = identity
        self._lock = lock
        was = previous or CheckpointContents(identity)
        self.completed: dict[str, CaseResult] = was.completed
        self.failed_before: dict[str, CaseResult] = was.failed
        self.completed_trials: dict[str, dict[int, CaseResult]] = was.completed_trials
        self.failed_trials_before = was.failed_trials
        kept = self.completed.keys() | {c for c, t in self.completed_trials.items() if 1 in t}
        self.truncated_ids: set[str] = {cid for cid in was.truncated_ids if cid in kept}
        self.resumed = previous is not None
        self.appended = 0
        try:
            if previous is None:
                # Temp file + rename: a crash leaves the old checkpoint or a whole header.
                write_bytes_atomic(self.path, _header_line(self.identity))
            elif previous.torn:
                # Cut the partial line off, so the next append starts on a line of its own.
                os.truncate(self.path, previous.good_bytes)
            self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_APPEND)
            os.fsync(self._fd)
        except OSError as exc:
            raise RuntimeFailure(
                f"{self.path}: cannot prepare the checkpoint: {exc.strerror or exc}"
            ) from None

    # -- opening -------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | Path, identity: RunIdentity, *, resume: bool) -> Checkpoint:
        """Lock the checkpoint and make it ready for appends."""
        from filelock import FileLock, Timeout

        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(p) + ".lock", timeout=0, thread_local=False)
        try:
            lock.acquire()
        except Timeout:
            raise ArtifactError(
                f"{p}: another `evalkit run` is writing this checkpoint right now; wait for it "
                "to finish, or give this run a different --out"
            ) from None
        try:
            previous = read_checkpoint(p)
            if previous is not None and not resume and previous.saved:
                what = (
                    f"{len(previous.completed)} finished case(s)"
                    if previous.completed
                    else f"{previous.saved} finished trial(s)"
                )
                raise ArtifactError(
                    f"{p} holds {what} from a run that did "
                    "not complete; rerun with --resume to keep them and run only the rest, or "
                    "delete the file to start over"
                )
            if previous is not None and not previous.saved:
                previous = None  # only failures (or nothing): no finished work to keep
            if previous is not None:  # finished rows, and --resume to keep them
                changed = previous.identity.differences(identity)
                if changed:
                    raise ArtifactError(
                        f"{p}: cannot resume, the checkpoint was written for a different run "
                        f"({'; '.join(changed)}); restore the previous setup, or delete the "
                        "checkpoint to start over"
                    )
            checkpoint = cls(p, identity, previous, lock)
        except BaseException:
            _unlock(lock)
            raise
        return checkpoint

    # -- writing -------------------------------------------------------------------

    def append(self, row: CaseResult, *, trial: int | None = None) -> None:
        """Write one finished row and make it durable (flush + fsync) before returning.

        ``trial`` (1-based) marks the row as one trial of a repeated run.
        """
        if self._fd is None:
            raise RuntimeFailure(
                f"{self.path}: checkpoint is closed; cannot record {row.case_id!r}"
            )
        doc = _row_dict(row, str(self.path))
        if trial is not None:
            doc = {TRIAL_KEY: trial, **doc}
        try:
            line = json.dumps(doc, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        except (TypeError, ValueError) as exc:
            raise ArtifactError(
                f"{self.path}: case {row.case_id!r}: its meta holds a value JSON cannot store "
                f"({exc}); keep meta to strings, numbers, booleans, lists and objects"
            ) from None
        data = (line + "\n").encode("utf-8")
        # Counted before the write: a Ctrl-C landing right after the write must not
        # leave a recorded row in a checkpoint that close() thinks is empty.
        self.appended += 1
        try:
            view = memoryview(data)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            os.fsync(self._fd)
        except OSError as exc:
            raise RuntimeFailure(
                f"{self.path}: cannot record case {row.case_id!r} in the checkpoint "
                f"({exc.strerror or exc}); the run stopped so that no finished case goes "
                "unrecorded"
            ) from None

    # -- closing -------------------------------------------------------------------

    def discard(self) -> None:
        """Delete the checkpoint (the run's artefact now holds every row) and unlock."""
        if not self._lock.is_locked:
            return
        self._close_fd()
        self.path.unlink(missing_ok=True)
        fsync_dir(self.path.parent)
        _unlock(self._lock)

    def close(self) -> None:
        """Stop appending and release the lock; the file stays for a later --resume unless
        it holds no row at all (a resumed checkpoint always holds finished ones)."""
        if not self.resumed and self.appended == 0:
            self.discard()
            return
        self._close_fd()
        if self._lock.is_locked:
            _unlock(self._lock)

    def _close_fd(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> Checkpoint:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def run_identity(
    config: EvalkitConfig, goldens: GoldenSet, shard: str | None = None
) -> RunIdentity:
    """The identity of a configured run, once its plugins and judges are registered."""
    from evalkit._spec.artifact import metric_info

    return RunIdentity(
        config=config_fingerprint(config),
        goldens=goldens.fingerprint(),
        metrics={name: metric_info(name).fingerprint for name in config.metrics},
        shard=shard,
    )
