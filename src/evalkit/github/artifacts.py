"""The Actions-artifact baseline store: find the default branch's artefact and fetch it.

Which artifact counts as *the* baseline is the security-relevant part. Anyone who can
open a PR from a fork can make a workflow run upload an artifact with the same name,
so an artifact is only a candidate when all of these hold:

* its name is the configured name and it has not expired;
* its workflow run built the branch whose baseline is wanted (``workflow_run.head_branch``):
  the default branch, or a PR's base branch when ``baseline.promote_branches`` names it;
* that run's head repository is this repository (``head_repository_id`` equals the
  repository id) — a fork's branch can be called ``main`` too;
* the run was triggered by ``push`` (the artifact payload does not say, so the run is
  fetched);
* its commit is in that branch's history (a tag named like the branch makes a push run
  with the same ``head_branch``).

A PR whose base branch promotes no baselines, or has none yet, is compared with the
default branch's (docs/baselines-per-branch.md).

Among candidates, the ones built from the preferred commits win, in order (the merge
base of the PR's merge ref, then the event's ``base.sha``), else the newest. An archive
that is corrupt, or holds no ``<config>.json``, is passed over for the next candidate
(a matrix job or another config uploading under the same name must not block the gate,
nor be compared with it). The archive is downloaded following GitHub's redirect to blob
storage *without* the token (the blob URL is pre-signed; the token must never reach a
third host), only to an https blob host GitHub uses (any https host on GHES, whose
storage the admin picks), re-requesting the signed URL once when it expired, under a
size cap, and unpacked with path-traversal and symlink checks.
"""

from __future__ import annotations

import shutil
import stat
import time
import zipfile
import zlib
from collections import Counter
from collections.abc import (
    Callable,
    Collection,
    Generator,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import closing, contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar
from urllib.parse import urljoin, urlsplit

import httpx

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
    artefact_file_names,
    check_artefact_bytes,
)
from evalkit._util.atomic import write_bytes_atomic
from evalkit._util.branches import branch_promotes
from evalkit._util.limits import MAX_ARTEFACT_BYTES
from evalkit.errors import ArtifactError, ConfigError
from evalkit.github.ancestry import Ancestry, compare_commits
from evalkit.github.client import (
    DEFAULT_RETRY,
    RateLimitBudget,
    RetryPolicy,
    call_github,
    rate_limit_delay,
)
from evalkit.github.errors import GitHubApiError, GitHubPermissionError

API_VERSION = "2022-11-28"
MAX_ZIP_MEMBERS = 1000
MAX_REDIRECTS = 3
# How many candidate runs we are willing to look up to find a push run.
MAX_RUN_LOOKUPS = 20
# How many accepted uploads past the preferred commits are ordered by ancestry.
NEAREST_WINDOW = 5
# The pinned reference: artifact "<baseline name>-reference" holding <config>.json and
# <config>.pin.json, uploaded by a mode: pin run (a push or a manual workflow_dispatch).
REFERENCE_SUFFIX = "-reference"
PIN_SUFFIX = ".pin.json"
PIN_EVENTS = ("push", "workflow_dispatch")


class ArtifactGone(GitHubApiError):
    """The artifact vanished between listing and download (404/410): try the next one."""


@dataclass(frozen=True)
class ArtifactInfo:
    """One entry of ``GET /repos/{owner}/{repo}/actions/artifacts``."""

    id: int
    name: str
    expired: bool
    created_at: datetime | None
    expires_at: datetime | None
    size_in_bytes: int
    archive_download_url: str
    run_id: int | None
    run_head_branch: str | None
    run_head_sha: str | None
    run_head_repository_id: int | None
    run_repository_id: int | None

    @classmethod
    def from_api(cls, data: Mapping[str, Any]) -> ArtifactInfo:
        run = data.get("workflow_run") or {}
        return cls(
            id=int(data["id"]),
            name=str(data["name"]),
            expired=bool(data.get("expired")),
            created_at=_parse_time(data.get("created_at")),
            expires_at=_parse_time(data.get("expires_at")),
            size_in_bytes=int(data.get("size_in_bytes") or 0),
            archive_download_url=str(data["archive_download_url"]),
            run_id=_opt_int(run.get("id")),
            run_head_branch=_opt_str(run.get("head_branch")),
            run_head_sha=_opt_str(run.get("head_sha")),
            run_head_repository_id=_opt_int(run.get("head_repository_id")),
            run_repository_id=_opt_int(run.get("repository_id")),
        )

    def is_expired(self, now: datetime) -> bool:
        return self.expired or (self.expires_at is not None and self.expires_at <= now)


def _parse_time(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _opt_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _opt_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


@dataclass
class Selection:
    """The artifacts worth trying, best first, and why the others were passed over."""

    candidates: list[ArtifactInfo] = field(default_factory=list)
    expired: list[ArtifactInfo] = field(default_factory=list)
    ignored: Counter[str] = field(default_factory=Counter)


def select_candidates(
    artifacts: Sequence[ArtifactInfo],
    *,
    name: str,
    repository_id: int,
    default_branch: str,
    prefer: Sequence[str] = (),
    now: datetime,
) -> Selection:
    """Filter to ``default_branch`` (the branch whose baselines are wanted) of this
    repository; order: preferred commits, then newest.

    The ``push`` event is checked later (it needs one request per run).
    """
    selection = Selection()
    for artifact in artifacts:
        if artifact.name != name:
            selection.ignored["another name"] += 1
        elif artifact.run_id is None:
            selection.ignored["no workflow run recorded"] += 1
        elif artifact.run_head_repository_id != repository_id or (
            artifact.run_repository_id is not None and artifact.run_repository_id != repository_id
        ):
            selection.ignored["uploaded by a run of another repository (fork)"] += 1
        elif artifact.run_head_branch != default_branch:
            selection.ignored[f"built from a branch other than {default_branch}"] += 1
        elif artifact.is_expired(now):
            selection.expired.append(artifact)
        else:
            selection.candidates.append(artifact)

    def newest_first(a: ArtifactInfo) -> tuple[float, int]:
        created = a.created_at.timestamp() if a.created_at else 0.0
        return (-created, -a.id)

    selection.candidates.sort(key=newest_first)
    rank = {sha: i for i, sha in reversed(list(enumerate(prefer)))}
    # Stable sort: artifacts of the first preferred commit, then the next, then the rest,
    # each group still newest first.
    selection.candidates.sort(key=lambda a: rank.get(a.run_head_sha or "", len(rank)))
    selection.expired.sort(key=newest_first)
    return selection


def _member_problem(info: zipfile.ZipInfo) -> str | None:
    name = info.filename
    if "\\" in name or name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return "has an absolute or Windows-style path"
    if any(part == ".." for part in PurePosixPath(name).parts):
        return "climbs out of the archive with '..'"
    # Unix file type bits live in the high half of external_attr; zips made without
    # them (type 0) are plain files.
    kind = stat.S_IFMT(info.external_attr >> 16)
    if kind == stat.S_IFLNK:
        return "is a symbolic link"
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        return "is not a regular file"
    return None


def safe_extract(
    archive: Path,
    dest: Path,
    *,
    max_total_bytes: int = MAX_ARTEFACT_BYTES,
    max_members: int = MAX_ZIP_MEMBERS,
    origin: str | None = None,
) -> list[Path]:
    """Unpack ``archive`` into ``dest``, refusing anything that could escape or explode.

    Every member is checked before anything is written: no absolute paths, no ``..``,
    no symlinks or device files, at most ``max_members`` entries and ``max_total_bytes``
    uncompressed (counted while copying, not trusted from the header).
    """
    where = origin or str(archive)
    try:
        zf = zipfile.ZipFile(archive)
    except zipfile.BadZipFile as exc:
        raise ArtifactError(f"{where}: not a zip archive ({exc})") from None
    with zf:
        members = zf.infolist()
        if len(members) > max_members:
            raise ArtifactError(f"{where}: {len(members)} entries, more than {max_members}")
        for info in members:
            problem = _member_problem(info)
            if problem:
                raise ArtifactError(f"{where}: entry {info.filename!r} {problem}; refusing it")
        if sum(info.file_size for info in members) > max_total_bytes:
            raise ArtifactError(f"{where}: unpacks to more than {max_total_bytes} bytes")
        dest.mkdir(parents=True, exist_ok=True)
        root = dest.resolve()
        written: list[Path] = []
        budget = max_total_bytes
        for info in members:
            target = (root / info.filename).resolve()
            if not target.is_relative_to(root):
                raise ArtifactError(f"{where}: entry {info.filename!r} escapes the target folder")
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                with zf.open(info) as src, target.open("wb") as out:
                    while chunk := src.read(1024 * 1024):
                        budget -= len(chunk)
                        if budget < 0:
                            raise ArtifactError(
                                f"{where}: unpacks to more than {max_total_bytes} bytes"
                            )
                        out.write(chunk)
            except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
                raise ArtifactError(
                    f"{where}: entry {info.filename!r} is corrupt ({exc})"
                ) from None
            written.append(target)
        return written


def pick_artefact_file(files: Sequence[Path], root: Path, config_name: str, origin: str) -> Path:
    """The artefact for ``config_name`` among unpacked files: exactly ``<config>.json[.gz]``.

    Never "the only .json there": that is another config's baseline under a shared name.
    """
    wanted = set(artefact_file_names(config_name))
    exact = [f for f in files if f.name in wanted]
    if len(exact) == 1:
        return exact[0]
    listing = ", ".join(sorted(f.relative_to(root).as_posix() for f in files)) or "nothing"
    raise ArtifactError(
        f"{origin}: expected one file named {config_name}.json (or .json.gz), found {listing}"
    )


GITHUB_BLOB_HOST_SUFFIXES = (".blob.core.windows.net", ".actions.githubusercontent.com")


def redirect_problem(api_url: str, next_url: str) -> str | None:
    """Why following a download redirect to ``next_url`` is refused, or None.

    Never from https to plain http (the signed URL and the archive would cross the
    network in the clear). From github.com only to the blob hosts GitHub uses; a GHES
    admin chooses the storage host, so there any https host (or, for an http API, the
    same scheme) is accepted.
    """
    api, nxt = urlsplit(api_url), urlsplit(next_url)
    if nxt.scheme not in ("https", "http"):
        return "a non-HTTP location"
    if nxt.scheme == "http" and api.scheme != "http":
        return f"plain http ({nxt.hostname}); refusing to fetch the archive unencrypted"
    host = (nxt.hostname or "").lower()
    if (api.hostname or "").lower() == "api.github.com" and not (
        host.endswith(GITHUB_BLOB_HOST_SUFFIXES) or host == "api.github.com"
    ):
        return f"an unexpected host {host!r} (not GitHub's artifact storage)"
    return None


class SignedUrlExpired(GitHubApiError):
    """Blob storage refused the pre-signed URL (it expires quickly): ask GitHub again."""


def download_archive(
    http: httpx.Client,
    url: str,
    token: str,
    dest: Path,
    *,
    max_bytes: int = MAX_ARTEFACT_BYTES,
    retry: RetryPolicy = DEFAULT_RETRY,
    api_url: str | None = None,
) -> None:
    """Download an artifact archive: the API answers 302, the blob host gets no token.

    5xx/transport failures are retried (``retry``), rate limits waited out, and an expired
    signed URL re-requested from the API once. ``api_url`` (default: ``url``'s origin)
    decides which redirect targets are acceptable (:func:`redirect_problem`).
    """
    attempt = 0
    refreshed = False
    budget = RateLimitBudget(retry)
    while True:
        attempt += 1
        try:
            _download_once(http, url, token, dest, max_bytes, api_url or url)
            return
        except SignedUrlExpired:
            if refreshed:
                raise
            refreshed = True  # a fresh 302 carries a freshly signed URL
            attempt -= 1
            continue
        except _RateLimited as exc:
            if budget.wait(exc.delay):
                attempt -= 1
                continue
            raise GitHubApiError(
                budget.refusal(f"downloading {url}", exc.delay), status=exc.status
            ) from None
        except (GitHubApiError, httpx.TransportError) as exc:
            status = exc.status if isinstance(exc, GitHubApiError) else None
            transient = isinstance(exc, httpx.TransportError) or (
                status is not None and status >= 500
            )
            if not transient:
                raise
            if attempt >= retry.attempts:
                if isinstance(exc, GitHubApiError):
                    raise GitHubApiError(
                        f"{exc} (gave up after {attempt} attempts)", status=status
                    ) from None
                raise GitHubApiError(
                    f"downloading {url} failed: {type(exc).__name__} after {attempt} attempts"
                ) from None
            retry.sleep(retry.delay(attempt))


class _RateLimited(GitHubApiError):
    def __init__(self, message: str, *, status: int, delay: float) -> None:
        super().__init__(message, status=status)
        self.delay = delay


def _download_once(
    http: httpx.Client, url: str, token: str, dest: Path, max_bytes: int, api_url: str
) -> None:
    api_headers = {
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": API_VERSION,
        "User-Agent": "evalkit-action",
    }
    if token:
        api_headers["Authorization"] = f"Bearer {token}"
    request = http.build_request("GET", url, headers=api_headers)
    current = url
    for hop in range(MAX_REDIRECTS + 1):
        response = http.send(request, stream=True, follow_redirects=False)
        try:
            if response.is_redirect:
                location = response.headers.get("location", "")
                next_url = urljoin(current, location)
                problem = redirect_problem(api_url, next_url)
                if problem:
                    raise GitHubApiError(f"{url}: redirected to {problem}")
                current = next_url
                # A fresh request: the pre-signed blob URL must not receive the token.
                request = http.build_request("GET", next_url, headers={"User-Agent": "evalkit"})
                request.headers.pop("Authorization", None)
                continue
            if hop == 0 and response.status_code in (403, 429):
                response.read()
                delay = rate_limit_delay(
                    response.status_code, dict(response.headers), response.text, time.time()
                )
                if delay is not None:
                    raise _RateLimited(
                        f"{url}: rate limited", status=response.status_code, delay=delay
                    )
            _raise_for_download_status(response, url, first_hop=hop == 0)
            _stream_to_file(response, dest, max_bytes, url)
            return
        finally:
            response.close()
    raise GitHubApiError(f"{url}: more than {MAX_REDIRECTS} redirects")


def _raise_for_download_status(response: httpx.Response, url: str, *, first_hop: bool) -> None:
    status = response.status_code
    if status == 200:
        return
    where = "GitHub" if first_hop else "artifact blob storage"
    if status in (404, 410):
        raise ArtifactGone(
            f"{url}: {where} answered HTTP {status} (expired or deleted)", status=status
        )
    if status in (401, 403) and first_hop:
        raise GitHubPermissionError(
            f"{url}: GitHub answered HTTP {status}; the token needs 'actions: read'",
            status=status,
        )
    if status in (400, 401, 403) and not first_hop:
        # Azure/S3 answer 403 (AuthenticationFailed / AccessDenied) once the signature's
        # short validity has passed, e.g. after a slow retry.
        raise SignedUrlExpired(
            f"{url}: artifact blob storage refused the signed URL (HTTP {status}; expired twice)",
            status=status,
        )
    raise GitHubApiError(f"{url}: {where} answered HTTP {status}", status=status)


def _stream_to_file(response: httpx.Response, dest: Path, max_bytes: int, url: str) -> None:
    declared = response.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > max_bytes:
        raise ArtifactError(f"{url}: archive is {declared} bytes, more than the {max_bytes} cap")
    dest.parent.mkdir(parents=True, exist_ok=True)
    total = 0
    with dest.open("wb") as out:
        for chunk in response.iter_bytes():
            total += len(chunk)
            if total > max_bytes:
                raise ArtifactError(f"{url}: archive is larger than the {max_bytes}-byte cap")
            out.write(chunk)


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
        api_url: str | None = None,
        promote_branches: Sequence[str] = (),
    ) -> None:
        self._access = access
        self.name = name
        # Which branches promote besides the default one (baseline.promote_branches).
        self._promote_branches = tuple(promote_branches)
        # The branch the current listing is of (the default one, or a PR's base branch).
        self._branch: str | None = None
        self._max_bytes = max_bytes
        self._now = now
        self._api_url = api_url
        # The default branch's head, read once per listing and after it (so every listed
        # upload's commit was pushed before it), and each commit's place behind it.
        self._branch_head: str | None = None
        self._ancestry: dict[str, Ancestry] = {}

    @classmethod
    def open(cls, settings: StoreSettings, access: GitHubAccess | None) -> ArtifactStore:
        return cls(
            access,
            name=settings.baseline.name,
            promote_branches=settings.baseline.promote_branches,
        )

    def describe(self) -> str:
        return f"artifact {self.name!r} of push runs on the default branch"

    @property
    def _retry(self) -> RetryPolicy:
        return self._access.retry if self._access else DEFAULT_RETRY

    def list_artifacts(self, name: str | None = None) -> list[ArtifactInfo]:
        """Every artifact with our name (or ``name``), across all pages."""
        assert self._access is not None
        repo = self._access.repo()
        wanted = name or self.name
        return call_github(
            f"list artifacts named {wanted!r}",
            lambda: [ArtifactInfo.from_api(a.raw_data) for a in repo.get_artifacts(name=wanted)],
            retry=self._retry,
        )

    def _run_event(self, run_id: int) -> str:
        assert self._access is not None
        repo = self._access.repo()
        data = call_github(
            f"get workflow run {run_id}",
            lambda: repo.get_workflow_run(run_id).raw_data,
            retry=self._retry,
        )
        return str(data.get("event") or "")

    def _select(
        self, name: str, prefer: Sequence[str], branch: str | None = None
    ) -> tuple[Selection, str]:
        """The candidates of ``branch`` (default: the default branch), and its name."""
        assert self._access is not None
        repository_id, default_branch = self._access.repo_facts()
        self._branch = branch or default_branch
        self._branch_head, self._ancestry = None, {}  # read anew after this listing
        selection = select_candidates(
            self.list_artifacts(name),
            name=name,
            repository_id=repository_id,
            default_branch=self._branch,
            prefer=prefer,
            now=self._now(),
        )
        return selection, self._branch

    @contextmanager
    def _client(self) -> Iterator[httpx.Client]:
        """The access's HTTP client, or one of our own, closed after."""
        assert self._access is not None
        if self._access.http is not None:
            yield self._access.http
            return
        with httpx.Client(timeout=60) as http:
            yield http

    def _accepted(
        self, selection: Selection, events: Sequence[str], max_lookups: int
    ) -> Generator[ArtifactInfo]:
        """The candidates, in order, made by an ``events`` run of a commit of the branch."""
        ignored = selection.ignored
        for lookups, artifact in enumerate(selection.candidates):
            if lookups >= max_lookups:
                ignored["not examined (too many candidates)"] += 1
                continue
            assert artifact.run_id is not None  # select_candidates guarantees it
            event = self._run_event(artifact.run_id)
            if event not in events:
                ignored[f"made by a {event or 'unknown'} run, not a {' or '.join(events)}"] += 1
                continue
            if not self._on_branch(artifact.run_head_sha).contains_head:
                # head_branch is only a name: a tag called like the branch makes a push
                # run with the same head_branch, from a commit never merged there.
                ignored[
                    f"built from a commit not on {self._branch_words()} (a tag of its name?)"
                ] += 1
                continue
            yield artifact

    def _made_by(
        self,
        selection: Selection,
        events: Sequence[str],
        max_lookups: int,
        prefer: Collection[str] = (),
    ) -> Generator[ArtifactInfo]:
        """The accepted candidates: the preferred commits' first, then nearest the head.

        After the preferred commits, the newest upload is not necessarily the newest
        baseline: a re-run of an old commit's promote job uploads last. So among the next
        ``NEAREST_WINDOW`` accepted ones, the commit fewest commits behind the default
        branch's head goes first (a descendant is always fewer behind than its ancestor).
        """
        accepted = self._accepted(selection, events, max_lookups)
        window: list[ArtifactInfo] = []
        for artifact in accepted:
            if artifact.run_head_sha in prefer:
                yield artifact  # select_candidates put every preferred one first
                continue
            window.append(artifact)
            if len(window) >= NEAREST_WINDOW:
                break
        window.sort(key=self._behind_by)  # stable: the newest upload first among equals
        yield from window
        yield from accepted

    def _in_branch_order(self, selection: Selection, max_lookups: int) -> list[ArtifactInfo]:
        """The accepted promotions oldest first along the default branch, one per commit.

        A commit uploaded twice (a re-run of its promote job) counts once, its newest upload.
        """
        newest: dict[str | None, ArtifactInfo] = {}
        for artifact in self._accepted(selection, ("push",), max_lookups):
            if artifact.run_head_sha in newest:
                selection.ignored["an older upload of a commit listed once"] += 1
                continue
            newest[artifact.run_head_sha] = artifact
        return sorted(
            newest.values(),
            key=lambda a: (-self._behind_by(a), a.created_at or datetime.min.replace(tzinfo=UTC)),
        )

    def _behind_by(self, artifact: ArtifactInfo) -> int:
        return self._on_branch(artifact.run_head_sha).behind_by or 0

    def _branch_words(self) -> str:
        """``the default branch``, or ``the branch release/1.x`` (a PR's base branch)."""
        assert self._access is not None
        default_branch = self._access.repo_facts()[1]
        if self._branch in (None, default_branch):
            return "the default branch"
        return f"the branch {self._branch}"

    def _on_branch(self, sha: str | None) -> Ancestry:
        """How commit ``sha`` relates to the listed branch's head (cached per commit).

        Commits gone from GitHub or from another history count as not on the branch; any
        other failure is GitHub's (exit 3), never read as "no baseline".
        """
        if not sha:
            return Ancestry("unknown", error="the run recorded no commit")
        if sha not in self._ancestry:
            assert self._access is not None
            repo = self._access.repo()
            if self._branch_head is None:
                branch = self._branch or self._access.repo_facts()[1]
                self._branch_head = call_github(
                    f"read the head of {branch}",
                    lambda: str(repo.get_git_ref(f"heads/{branch}").object.sha),
                    retry=self._retry,
                )
            head = self._branch_head
            ancestry = compare_commits(repo, head, sha, retry=self._retry)
            if ancestry.status == "unknown" and ancestry.error_status not in (404, 422):
                raise GitHubApiError(
                    f"{ancestry.error} (needed to tell whether {sha[:12]} is on "
                    f"{self._branch_words()}; the token needs 'contents: read')",
                    status=ancestry.error_status,
                )
            self._ancestry[sha] = ancestry
        return self._ancestry[sha]

    def _downloads(
        self,
        artifacts: Iterable[ArtifactInfo],
        selection: Selection,
        config_name: str,
        dest_dir: Path,
        *,
        naming: Callable[[ArtifactInfo], str] | None = None,
        unusable: list[str],
    ) -> Generator[tuple[ArtifactInfo, Path]]:
        """Each of ``artifacts`` (accepted ones, in order) that downloads and unpacks.

        Why the others were passed over is counted in ``selection.ignored`` (and the
        corrupt ones' messages appended to ``unusable``).
        """
        with self._client() as http:
            for artifact in artifacts:
                stem = naming(artifact) if naming else f"baseline-{config_name}"
                path = self._download(
                    http, artifact, config_name, dest_dir, stem, selection, unusable
                )
                if path is not None:
                    yield artifact, path

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
        # Its base branch's history starts on the default branch: that baseline is the one
        # the branch was cut from, or the nearest after it.
        fallback = self._fetch_of(request, default_branch)
        return replace(fallback, detail=f"{fallback.detail}; {why}, so {default_branch}'s is used")

    def _fetch_of(self, request: FetchRequest, branch: str) -> BaselineFetch:
        """The baseline among ``branch``'s promotions: preferred commits first, else nearest."""
        preferred = {p.sha: p.why for p in request.preferred}
        selection, listed = self._select(self.name, [p.sha for p in request.preferred], branch)
        unusable: list[str] = []
        accepted = self._made_by(selection, ("push",), MAX_RUN_LOOKUPS, prefer=preferred)
        downloads = self._downloads(
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
        selection, default_branch = self._select(self.name, ())
        unusable: list[str] = []
        limit = request.limit or len(selection.candidates)
        folder = request.dest_dir / f"history-{request.config_name}"
        entries: list[HistoryEntry] = []
        for artifact, path in self._downloads(
            self._in_branch_order(selection, limit),
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
            newest = selection.expired[0]
            when = newest.expires_at.date().isoformat() if newest.expires_at else "unknown"
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
        selection, _ = self._select(self.name, ())
        # Choose from what GitHub says about each artifact; download only the chosen one.
        pushed = self._in_branch_order(selection, len(selection.candidates))
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
        with self._client() as http:
            path = self._download(
                http,
                artifact,
                config_name,
                request.dest_dir,
                f"artifact-{artifact.id}",
                selection,
                unusable,
            )
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
        selection, default_branch = self._select(name, ())
        unusable: list[str] = []
        # The newest pin wins, whatever commit it names: a re-pin to an older promotion
        # is on purpose.
        downloads = self._downloads(
            self._accepted(selection, PIN_EVENTS, MAX_RUN_LOOKUPS),
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
            newest = selection.expired[0]
            when = newest.expires_at.date().isoformat() if newest.expires_at else "an unknown date"
            return BaselineFetch(
                "expired",
                None,
                "artifact",
                f"the pinned reference (artifact {name!r}) expired on {when} (artifact "
                "retention); re-pin it with mode: pin, or use baseline-store: branch, which "
                "keeps it until re-pinned",
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
            newest = selection.expired[0]
            when = newest.expires_at.date().isoformat() if newest.expires_at else "an unknown date"
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

    def _download(
        self,
        http: httpx.Client,
        artifact: ArtifactInfo,
        config_name: str,
        dest_dir: Path,
        stem: str,
        selection: Selection,
        unusable: list[str],
    ) -> Path | None:
        """Download, unpack and check one artifact: ``dest_dir/<stem>.json[.gz]``.

        A pin record (``<config>.pin.json``) in the archive is kept beside it.  None when
        it is gone or unusable, and why in ``selection.ignored`` (and ``unusable``).
        """
        try:
            return self._unpack(http, artifact, config_name, dest_dir / stem)
        except ArtifactGone:
            selection.ignored["gone when downloaded"] += 1
        except ArtifactError as exc:
            # Corrupt, or another config's upload under our name: try the next one.
            unusable.append(str(exc))
            selection.ignored["unusable (corrupt, or no file for this config)"] += 1
        return None

    def _unpack(
        self, http: httpx.Client, artifact: ArtifactInfo, config_name: str, target: Path
    ) -> Path:
        """``target`` plus ``.json``/``.json.gz``: the artefact for ``config_name``, checked."""
        dest_dir = target.parent
        assert self._access is not None
        origin = f"artifact {artifact.name!r} #{artifact.id}"
        if artifact.size_in_bytes > self._max_bytes:
            raise ArtifactError(
                f"{origin}: {artifact.size_in_bytes} bytes, more than the {self._max_bytes} cap"
            )
        work = dest_dir / f"artifact-{artifact.id}"
        if work.exists():
            shutil.rmtree(work)
        archive = work / "archive.zip"
        download_archive(
            http,
            artifact.archive_download_url,
            self._access.token,
            archive,
            max_bytes=self._max_bytes,
            retry=self._retry,
            api_url=self._api_url,
        )
        unpacked = work / "unpacked"
        files = safe_extract(archive, unpacked, max_total_bytes=self._max_bytes, origin=origin)
        chosen = pick_artefact_file(files, unpacked.resolve(), config_name, origin)
        data = chosen.read_bytes()
        check_artefact_bytes(data, f"{origin} ({chosen.name})")
        suffix = ".json.gz" if chosen.name.endswith(".gz") else ".json"
        final = dest_dir / f"{target.name}{suffix}"
        write_bytes_atomic(final, data)
        pins = [f for f in files if f.name == f"{config_name}{PIN_SUFFIX}"]
        pin_copy = final.with_name(f"{config_name}{PIN_SUFFIX}")
        if len(pins) == 1:
            write_bytes_atomic(pin_copy, pins[0].read_bytes())
        else:
            pin_copy.unlink(missing_ok=True)  # never another download's record
        shutil.rmtree(work, ignore_errors=True)
        return final

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


__all__ = [
    "ArtifactGone",
    "ArtifactInfo",
    "ArtifactStore",
    "PIN_EVENTS",
    "REFERENCE_SUFFIX",
    "Selection",
    "download_archive",
    "pick_artefact_file",
    "redirect_problem",
    "safe_extract",
    "select_candidates",
]
