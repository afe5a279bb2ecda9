"""Fetching an Actions artifact: download the archive, unpack it safely, pick the file."""

from __future__ import annotations

import shutil
import stat
import time
import zipfile
import zlib
from collections.abc import Callable, Generator, Iterable, Sequence
from contextlib import ExitStack
from pathlib import Path, PurePosixPath
from urllib.parse import urljoin, urlsplit

import httpx

from evalkit._store.protocol import GitHubAccess, artefact_file_names, check_artefact_bytes
from evalkit._util.atomic import write_bytes_atomic
from evalkit._util.limits import MAX_ARTEFACT_BYTES
from evalkit.errors import ArtifactError
from evalkit.github.artifact_candidates import ArtifactInfo, Selection
from evalkit.github.client import (
    DEFAULT_RETRY,
    GitHubApiError,
    GitHubPermissionError,
    RetryPolicy,
    rate_limit_delay,
    rate_limit_refusal,
)

API_VERSION = "2022-11-28"
MAX_ZIP_MEMBERS = 1000
MAX_REDIRECTS = 3
PIN_SUFFIX = ".pin.json"  # a pin record travels beside the artefact: <config>.pin.json


class ArtifactGone(GitHubApiError):
    """The artifact vanished between listing and download (404/410): try the next one."""


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
    origin: str | None = None,
) -> list[Path]:
    """Unpack ``archive`` into ``dest``, refusing anything that could escape or explode."""
    where = origin or str(archive)
    try:
        zf = zipfile.ZipFile(archive)
    except zipfile.BadZipFile as exc:
        raise ArtifactError(f"{where}: not a zip archive ({exc})") from None
    with zf:
        members = zf.infolist()
        if len(members) > MAX_ZIP_MEMBERS:
            raise ArtifactError(f"{where}: {len(members)} entries, more than {MAX_ZIP_MEMBERS}")
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
    """Why following a download redirect to ``next_url`` is refused, or None."""
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
    """Download an artifact archive: the API answers 302, the blob host gets no token."""
    attempt = 0
    refreshed = False
    budget = retry.rate_limit_budget()
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
                rate_limit_refusal(f"downloading {url}", exc.delay, budget), status=exc.status
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


class ArtifactDownloader:
    """Downloads accepted artifacts into a folder, each checked and named as asked."""

    def __init__(self, access: GitHubAccess, max_bytes: int) -> None:
        self._access = access
        self._max_bytes = max_bytes

    def downloads(
        self,
        artifacts: Iterable[ArtifactInfo],
        selection: Selection,
        config_name: str,
        dest_dir: Path,
        *,
        naming: Callable[[ArtifactInfo], str] | None = None,
        unusable: list[str],
    ) -> Generator[tuple[ArtifactInfo, Path]]:
        """Each of ``artifacts`` (accepted ones, in order) that downloads, unpacks and
        checks: ``dest_dir/<stem>.json[.gz]``, the stem ``naming`` gives."""
        with ExitStack() as stack:
            # the access's HTTP client, or one of our own, closed after
            http = self._access.http or stack.enter_context(httpx.Client(timeout=60))
            for artifact in artifacts:
                stem = naming(artifact) if naming else f"baseline-{config_name}"
                try:
                    path = self._unpack(http, artifact, config_name, dest_dir / stem)
                except ArtifactGone:
                    selection.ignored["gone when downloaded"] += 1
                    continue
                except ArtifactError as exc:
                    # Corrupt, or another config's upload under our name: try the next one.
                    unusable.append(str(exc))
                    selection.ignored["unusable (corrupt, or no file for this config)"] += 1
                    continue
                yield artifact, path

    def _unpack(
        self, http: httpx.Client, artifact: ArtifactInfo, config_name: str, target: Path
    ) -> Path:
        """``target`` plus ``.json``/``.json.gz``: the artefact for ``config_name``, checked."""
        dest_dir = target.parent
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
            retry=self._access.retry,
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
