"""The Actions-artifact baseline store: baseline, history and pinned reference kept as
artifacts; choosing (artifact_candidates) and fetching (artifact_download) are delegated."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import ClassVar

from evalkit._store.history import (
    History,
    HistoryEntry,
    PinRecord,
    artefact_facts,
    make_entry,
    no_reference,
    reference_found,
    select_pinned,
)
from evalkit._store.protocol import (
    BaselineFetch,
    FetchRequest,
    GitHubAccess,
    HistoryRequest,
    PinRequest,
    PinResult,
    PromoteRequest,
    PromoteResult,
    StoreSettings,
)
from evalkit._util.atomic import write_bytes_atomic
from evalkit._util.branches import branch_promotes
from evalkit._util.limits import MAX_ARTEFACT_BYTES
from evalkit.errors import ArtifactError, ConfigError
from evalkit.github.artifact_candidates import MAX_RUN_LOOKUPS, ArtifactFinder, Selection
from evalkit.github.artifact_download import PIN_SUFFIX, ArtifactDownloader

# The pinned reference: artifact "<baseline name>-reference" holding <config>.json and
# <config>.pin.json, uploaded by a mode: pin run (a push or a manual workflow_dispatch).
REFERENCE_SUFFIX = "-reference"
PIN_EVENTS = ("push", "workflow_dispatch")


class ArtifactStore:
    """Baselines kept as Actions artifacts (written by ``actions/upload-artifact``)."""

    kind: ClassVar[str] = "artifact"

    def __init__(
        self,
        access: GitHubAccess | None,
        *,
        name: str,
        max_bytes: int = MAX_ARTEFACT_BYTES,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        promote_branches: Sequence[str] = (),
    ) -> None:
        self._access = access
        self.name = name
        # Which branches promote besides the default one (baseline.promote_branches).
        self._promote_branches = tuple(promote_branches)
        # Without GitHub access (the CLI) the store only says where the Action looks.
        self._find = ArtifactFinder(access, now) if access is not None else None
        self._fetch = ArtifactDownloader(access, max_bytes) if access else None

    @classmethod
    def open(cls, settings: StoreSettings, access: GitHubAccess | None) -> ArtifactStore:
        return cls(
            access,
            name=settings.baseline.name,
            promote_branches=settings.baseline.promote_branches,
        )

    def describe(self) -> str:
        branches = " and ".join(("the default branch", *self._promote_branches))
        return f"artifact {self.name!r} of push runs on {branches}"

    @property
    def _finder(self) -> ArtifactFinder:
        assert self._find is not None  # each use is past its method's no-access answer
        return self._find

    @property
    def _downloader(self) -> ArtifactDownloader:
        assert self._fetch is not None
        return self._fetch

    def fetch(self, request: FetchRequest) -> BaselineFetch:
        """Find, download, unpack and sanity-check the baseline artefact."""
        if self._access is None:
            return BaselineFetch(
                status="missing",
                path=None,
                source="artifact",
                detail=(
                    f"baseline.store is artifact ({self.describe()}), which only the GitHub "
                    "Action can read (its mode: promote stores one on a push to the default "
                    "branch); pass --baseline PATH to compare with a local run file"
                ),
            )
        _, default_branch = self._access.repo_facts()
        wanted = request.branch
        if not wanted or wanted == default_branch:
            return self._fetch_of(request, default_branch)
        if branch_promotes(wanted, default_branch, self._promote_branches):
            own = self._fetch_of(request, wanted)
            if own.found:
                return own
            why = f"{wanted} has no baseline yet ({own.detail})"
        else:
            why = (
                f"the base branch {wanted} promotes no baselines (add it to promote-branches "
                "to keep its own)"
            )
        # The base branch's history starts on the default branch: that baseline is the one
        # the branch was cut from, or the nearest after it.
        fallback = self._fetch_of(request, default_branch)
        return replace(fallback, detail=f"{fallback.detail}; {why}, so {default_branch}'s is used")

    def _fetch_of(self, request: FetchRequest, branch: str) -> BaselineFetch:
        """The baseline among ``branch``'s promotions: preferred commits first, else nearest."""
        preferred = {p.sha: p.why for p in request.preferred}
        prefer = [p.sha for p in request.preferred]
        selection, listed = self._finder.select(self.name, prefer, branch)
        unusable: list[str] = []
        accepted = self._finder.made_by(selection, ("push",), MAX_RUN_LOOKUPS, prefer=preferred)
        downloads = self._downloader.downloads(
            accepted, selection, request.config_name, request.dest_dir, unusable=unusable
        )
        with closing(downloads):
            found = next(downloads, None)
        if found is not None:
            artifact, path = found
            sha = artifact.run_head_sha
            why = f" ({preferred[sha]})" if sha in preferred else ""
            skipped = f"; passed over first: {unusable[0]}" if unusable else ""
            return BaselineFetch(
                status="found",
                path=path,
                source="artifact",
                sha=sha,
                detail=(
                    f"artifact {self.name!r} #{artifact.id} from push run {artifact.run_id} "
                    f"on {listed} at {(sha or '?')[:12]}{why}{skipped}"
                ),
            )
        if unusable and not selection.expired:
            raise ArtifactError(
                f"no usable baseline artifact {self.name!r}: " + "; ".join(unusable[:3])
            )
        return self._no_baseline(selection, listed)

    # -- history and the pinned reference ---------------------------------------------

    @property
    def reference_name(self) -> str:
        """The artifact the pinned reference is uploaded as (mode: pin)."""
        return f"{self.name}{REFERENCE_SUFFIX}"

    def history(self, request: HistoryRequest) -> History:
        """The promotions GitHub still holds: retention deletes artifacts, so says how many."""
        if self._access is None:
            return History(
                (),
                "artifact",
                f"baseline.store is artifact ({self.describe()}), whose history only the "
                "GitHub Action can read",
            )
        selection, default_branch = self._finder.select(self.name, ())
        unusable: list[str] = []
        limit = request.limit or len(selection.candidates)
        folder = request.dest_dir / f"history-{request.config_name}"
        entries: list[HistoryEntry] = []
        for artifact, path in self._downloader.downloads(
            self._finder.in_branch_order(selection, limit),
            selection,
            request.config_name,
            folder,
            naming=lambda a: f"artifact-{a.id}",
            unusable=unusable,
        ):
            _, fingerprint = artefact_facts(path.read_bytes(), str(path))
            entries.append(
                make_entry(
                    path,
                    sha=artifact.run_head_sha,
                    promoted_at=artifact.created_at,
                    config_fingerprint=fingerprint,
                )
            )
        lost = len(selection.expired)
        parts = [
            f"{len(entries)} promotion(s) held as artifact {self.name!r} on {default_branch}; "
            "the artifact store keeps only what GitHub's artifact retention allows (90 days "
            "by default)"
        ]
        if lost:
            when = selection.expired_on("unknown")
            parts.append(f"{lost} older promotion(s) expired (the newest of them on {when})")
        if selection.ignored:
            passed = ", ".join(f"{n} {why}" for why, n in sorted(selection.ignored.items()))
            parts.append(f"passed over: {passed}")
        parts.append("use baseline-store: branch to keep every promotion")
        return History(tuple(entries), "artifact", "; ".join(parts), lost)

    def pin(self, request: PinRequest) -> PinResult:
        """Leave the chosen promotion and its pin record for ``actions/upload-artifact``."""
        if self._access is None:
            raise ConfigError(
                f"baseline.store is artifact ({self.describe()}): pin it with the Action's "
                "mode: pin"
            )
        config_name = request.config_name
        selection, _ = self._finder.select(self.name, ())
        # Choose from what GitHub says about each artifact; download only the chosen one.
        pushed = self._finder.in_branch_order(selection, len(selection.candidates))
        listed = {
            make_entry(
                Path(f"artifact-{a.id}"),
                sha=a.run_head_sha,
                promoted_at=a.created_at,
                config_fingerprint=None,
            ): a
            for a in pushed
        }
        chosen, why = select_pinned(list(listed), request.spec, request.resolve_tag)
        artifact = listed[chosen]
        unusable: list[str] = []
        downloads = self._downloader.downloads(
            [artifact],
            selection,
            config_name,
            request.dest_dir,
            naming=lambda a: f"artifact-{a.id}",
            unusable=unusable,
        )
        with closing(downloads):
            _, path = next(downloads, (artifact, None))
        if path is None:
            raise ArtifactError(
                f"cannot pin {chosen.label}: artifact {self.name!r} #{artifact.id} "
                + (unusable[0] if unusable else "is gone (expired or deleted)")
            )
        data = path.read_bytes()
        _, fingerprint = artefact_facts(data, str(path))
        chosen = replace(chosen, path=path, config_fingerprint=fingerprint)
        record = PinRecord.of(chosen, request.spec, why, request.moment())
        upload_dir = request.output_dir / "reference"
        if upload_dir.exists():
            shutil.rmtree(upload_dir)
        suffix = ".json.gz" if data[:2] == b"\x1f\x8b" else ".json"
        target = upload_dir / f"{request.config_name}{suffix}"
        write_bytes_atomic(target, data)
        write_bytes_atomic(
            upload_dir / f"{request.config_name}{PIN_SUFFIX}", record.to_json().encode("utf-8")
        )
        return PinResult(
            record,
            "artifact",
            str(target),
            (
                f"upload it with actions/upload-artifact as {self.reference_name!r} (it expires "
                f"with the artifact retention, then re-pin): {record.describe()}"
            ),
            upload_dir=upload_dir,
            upload_name=self.reference_name,
        )

    def fetch_reference(self, request: FetchRequest) -> BaselineFetch:
        """The newest pinned reference artifact (push or workflow_dispatch runs only)."""
        name = self.reference_name
        if self._access is None:
            return BaselineFetch(
                "missing",
                None,
                "artifact",
                f"baseline.store is artifact: the reference {name!r} only the GitHub Action "
                "can read; pass --reference PATH to compare with a local file",
            )
        selection, default_branch = self._finder.select(name, ())
        unusable: list[str] = []
        # The newest pin wins, whatever commit it names: a re-pin to an older promotion
        # is on purpose.
        downloads = self._downloader.downloads(
            self._finder.accepted(selection, PIN_EVENTS, MAX_RUN_LOOKUPS),
            selection,
            request.config_name,
            request.dest_dir,
            naming=lambda _a: f"reference-{request.config_name}",
            unusable=unusable,
        )
        with closing(downloads):
            for artifact, path in downloads:
                pin = path.with_name(f"{request.config_name}{PIN_SUFFIX}")
                origin = f"artifact {name!r} #{artifact.id}"
                if not pin.is_file():
                    unusable.append(f"{origin} holds no {request.config_name}{PIN_SUFFIX}")
                    continue
                record = PinRecord.from_json(pin.read_bytes(), origin)
                return reference_found(path, record, "artifact", origin)
        if selection.expired:
            return BaselineFetch(
                "expired",
                None,
                "artifact",
                f"the pinned reference (artifact {name!r}) expired on {selection.expired_on()} "
                "(artifact retention); re-pin it with mode: pin, or use baseline-store: branch, "
                "which keeps it until re-pinned",
            )
        if unusable:
            raise ArtifactError(
                f"no usable reference artifact {name!r}: " + "; ".join(unusable[:3])
            )
        return no_reference(
            "artifact", f"no artifact {name!r} from {default_branch}", "the Action's mode: pin"
        )

    def _no_baseline(self, selection: Selection, default_branch: str) -> BaselineFetch:
        passed_over = "; ".join(f"{n} {why}" for why, n in sorted(selection.ignored.items()))
        suffix = f" (passed over: {passed_over})" if passed_over else ""
        if selection.expired:
            when = selection.expired_on()
            return BaselineFetch(
                status="expired",
                path=None,
                source="artifact",
                detail=(
                    f"store artifact: the newest artifact {self.name!r} from {default_branch} "
                    f"expired on {when}{suffix}; push to {default_branch} to promote a fresh "
                    "baseline, or use baseline-store: branch, which does not expire"
                ),
            )
        return BaselineFetch(
            status="missing",
            path=None,
            source="artifact",
            detail=(
                f"store artifact: no artifact {self.name!r} from a push to {default_branch} of "
                f"this repository{suffix}; run the workflow with mode: promote on "
                f"{default_branch} first"
            ),
        )

    def promote(self, request: PromoteRequest) -> PromoteResult:
        """Leave the artefact in a folder for ``actions/upload-artifact`` to upload."""
        candidate = request.artefact
        suffix = ".json.gz" if candidate.name.endswith(".gz") else ".json"
        upload_dir = request.output_dir / "baseline"
        target = upload_dir / f"{request.config_name}{suffix}"
        write_bytes_atomic(target, candidate.read_bytes())
        return PromoteResult(
            source="artifact",
            location=str(target),
            sha=request.sha or None,
            detail=(
                f"upload it with actions/upload-artifact as {self.name!r}; the history keeps "
                "it as long as the artifact retention does (baseline-store: branch keeps all)"
            ),
            upload_dir=upload_dir,
            latest="none",
        )
