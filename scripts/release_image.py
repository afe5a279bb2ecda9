"""The release workflow's checks of images, through the registry's own HTTP API (#25).

    python scripts/release_image.py base [--dockerfile Dockerfile] [--verify] [--update]
    python scripts/release_image.py digest METADATA_FILE
    python scripts/release_image.py public IMAGE@sha256:... --platform linux/amd64 ...
    python scripts/release_image.py same-manifest IMAGE:TAG sha256:...
    python scripts/release_image.py major-version IMAGE:vX

``base`` reads the two base-image ARGs of the Dockerfile: ``PYTHON_BASE`` (the tag a plain
build uses, so a machine without Docker Hub can build from a local image of that tag)
and ``PYTHON_BASE_PINNED`` (the same tag pinned by its index digest, which releases and CI
build from). It prints the pinned reference. ``--verify`` asks the registry, without
credentials, that the pinned digest exists and is an index with the architectures the
release builds, and says (a notice, not a failure) when the tag has moved on;
``--update`` rewrites ``PYTHON_BASE_PINNED`` to the tag's current index digest.

``digest`` prints the index digest that ``docker buildx build --metadata-file`` recorded.

``public`` is the anonymous pull: as a client with no credentials it reads the index
by digest, checks the bytes hash to that digest and that every ``--platform`` is in it,
then reads each platform's manifest and asks for its config and layers. Any refusal
stops the release before anything is published (a new ghcr.io package is private).

``same-manifest`` checks a tag names exactly the manifest of a digest (after moving the
major tag).

``major-version`` prints the ``X.Y.Z`` release a major tag (``IMAGE:v1``) names: the
highest ``X.Y.Z`` tag on the same index (nothing when there is no such major tag yet), so
the release moves the major tag only forward (scripts/release_major.py).

Standard library only: the workflow runs it before and without the dev environment.
Plain HTTP is used for loopback registries only (the release simulation's).
"""

from __future__ import annotations

import argparse
import hashlib
import ipaddress
import json
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
INDEX_TYPES = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
)
MANIFEST_TYPES = (
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
)
ACCEPT = ", ".join(INDEX_TYPES + MANIFEST_TYPES)
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
PLATFORMS = ("linux/amd64", "linux/arm64")
DOCKER_HUB = "registry-1.docker.io"
TIMEOUT_S = 60


class Refused(Exception):
    """The registry would not let an anonymous client read something (or it is absent)."""


class Broken(Exception):
    """What the registry sent is not what a release may rest on."""


class Ref(NamedTuple):
    """``registry/repository`` and a tag or digest, Docker's way of spelling them."""

    registry: str
    repository: str
    tag: str | None
    digest: str | None

    @classmethod
    def parse(cls, text: str) -> Ref:
        rest, _, digest = text.partition("@")
        if digest and not DIGEST.fullmatch(digest):
            raise Broken(f"{text}: the digest must be sha256: and 64 hex digits")
        first, _, remainder = rest.partition("/")
        if remainder and ("." in first or ":" in first or first == "localhost"):
            registry, path = first, remainder
        else:
            registry, path = DOCKER_HUB, rest
        name, _, tag = path.rpartition(":") if ":" in path else (path, "", "")
        if registry == DOCKER_HUB and "/" not in name:
            name = f"library/{name}"
        if not re.fullmatch(
            r"[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*", name
        ):
            raise Broken(f"{text}: {name!r} is not a repository name")
        return cls(registry, name, tag or None, digest or None)

    @property
    def reference(self) -> str:
        reference = self.digest or self.tag
        if reference is None:
            raise Broken(f"{self}: give a tag or a digest")
        return reference

    def base_url(self) -> str:
        host = self.registry.rsplit(":", 1)[0].strip("[]")
        try:
            loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        return f"{'http' if loopback else 'https'}://{self.registry}/v2/{self.repository}"

    def __str__(self) -> str:
        shown = (
            self.repository.removeprefix("library/")
            if self.registry == DOCKER_HUB
            else (f"{self.registry}/{self.repository}")
        )
        return (
            shown
            + (f":{self.tag}" if self.tag else "")
            + (f"@{self.digest}" if self.digest else "")
        )


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    # A registry redirects a blob to storage only after it authorised the read; following
    # would send our Authorization header to the storage host, which may refuse it.
    def redirect_request(self, *_args: Any, **_kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def _challenge(header: str) -> tuple[str, dict[str, str]]:
    scheme, _, params = header.partition(" ")
    return scheme.lower(), dict(re.findall(r'(\w+)="([^"]*)"', params))


class Anonymous:
    """A registry client without credentials: the Bearer token flow, anonymously."""

    def __init__(self) -> None:
        self._tokens: dict[str, str] = {}

    def _open(self, request: urllib.request.Request) -> tuple[int, Mapping[str, str], bytes]:
        try:
            with _OPENER.open(request, timeout=TIMEOUT_S) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, dict(exc.headers), exc.read()
        except (urllib.error.URLError, OSError) as exc:
            raise Broken(f"{request.full_url}: {exc}") from None

    def request(self, ref: Ref, path: str, *, method: str = "GET") -> tuple[int, bytes, str]:
        url = f"{ref.base_url()}/{path}"
        for attempt in range(2):
            headers = {"Accept": ACCEPT}
            if ref.registry in self._tokens:
                headers["Authorization"] = f"Bearer {self._tokens[ref.registry]}"
            status, got, body = self._open(
                urllib.request.Request(url, headers=headers, method=method)
            )
            if status != 401 or attempt:
                return status, body, {k.lower(): v for k, v in got.items()}.get("content-type", "")
            scheme, params = _challenge(
                {k.lower(): v for k, v in got.items()}.get("www-authenticate", "")
            )
            if scheme != "bearer" or "realm" not in params:
                raise Refused(f"{ref}: the registry asks for credentials ({scheme or 'no'} auth)")
            query = {k: v for k, v in params.items() if k in ("service", "scope")}
            query.setdefault("scope", f"repository:{ref.repository}:pull")
            token_url = f"{params['realm']}?{urllib.parse.urlencode(query)}"
            t_status, _, t_body = self._open(urllib.request.Request(token_url))
            if t_status != 200:
                raise Refused(f"{ref}: no anonymous token (HTTP {t_status} from {params['realm']})")
            try:
                answer = json.loads(t_body)
                self._tokens[ref.registry] = str(answer.get("token") or answer["access_token"])
            except (ValueError, KeyError, TypeError, AttributeError):
                raise Broken(f"{ref}: the token service sent no token") from None
        raise AssertionError("unreachable")

    def manifest(self, ref: Ref) -> tuple[bytes, str]:
        status, body, media_type = self.request(ref, f"manifests/{ref.reference}")
        if status != 200:
            raise Refused(f"{ref}: HTTP {status} for its manifest")
        if ref.digest is not None and "sha256:" + hashlib.sha256(body).hexdigest() != ref.digest:
            raise Broken(f"{ref}: the registry's manifest does not hash to the digest asked for")
        return body, media_type.split(";")[0].strip()

    def blob_readable(self, ref: Ref, digest: str) -> None:
        status, _, _ = self.request(ref, f"blobs/{digest}", method="HEAD")
        if status not in (200, 302, 303, 307, 308):
            raise Refused(f"{ref}: HTTP {status} for blob {digest}")


def _platform(entry: Mapping[str, Any]) -> str:
    platform = entry.get("platform") or {}
    return f"{platform.get('os')}/{platform.get('architecture')}"


def index_platforms(client: Anonymous, ref: Ref, wanted: Sequence[str]) -> dict[str, str]:
    """The digest of each wanted platform's manifest in the index ``ref`` names."""
    body, media_type = client.manifest(ref)
    doc = json.loads(body)
    media_type = doc.get("mediaType") or media_type
    if media_type not in INDEX_TYPES:
        raise Broken(
            f"{ref}: a single-platform manifest ({media_type}), not an index of {', '.join(wanted)}"
        )
    found = {_platform(m): str(m["digest"]) for m in doc.get("manifests", []) if "digest" in m}
    missing = [p for p in wanted if p not in found]
    if missing:
        raise Broken(
            f"{ref}: the index has no {', '.join(missing)} image "
            f"(it has {', '.join(sorted(found)) or 'none'})"
        )
    return {p: found[p] for p in wanted}


def check_public(image: str, platforms: Sequence[str]) -> None:
    """Read ``image`` (by digest) and every part of each platform's image, anonymously."""
    ref = Ref.parse(image)
    if ref.digest is None:
        raise Broken(f"{image}: check the pushed digest (IMAGE@sha256:...), not a tag")
    client = Anonymous()
    for platform, digest in index_platforms(client, ref, platforms).items():
        one = Ref(ref.registry, ref.repository, None, digest)
        doc = json.loads(client.manifest(one)[0])
        blobs = [doc["config"]["digest"], *(layer["digest"] for layer in doc.get("layers", []))]
        for blob in blobs:
            client.blob_readable(ref, blob)
        print(f"anonymous pull ok: {platform} {digest} ({len(blobs) - 1} layers)")


# -- the base image ---------------------------------------------------------------------------

_ARG = re.compile(r"^ARG (PYTHON_BASE(?:_PINNED)?)=(\S+)\s*$", re.MULTILINE)


def base_args(dockerfile: Path) -> tuple[Ref, Ref]:
    """The Dockerfile's ``PYTHON_BASE`` (a tag) and ``PYTHON_BASE_PINNED`` (that tag @digest)."""
    args = dict(_ARG.findall(dockerfile.read_text(encoding="utf-8")))
    if set(args) != {"PYTHON_BASE", "PYTHON_BASE_PINNED"}:
        raise Broken(
            f"{dockerfile}: needs ARG PYTHON_BASE=IMAGE:TAG and "
            "ARG PYTHON_BASE_PINNED=IMAGE:TAG@sha256:..."
        )
    tag, pinned = Ref.parse(args["PYTHON_BASE"]), Ref.parse(args["PYTHON_BASE_PINNED"])
    if tag.digest is not None or tag.tag is None:
        raise Broken(f"{dockerfile}: PYTHON_BASE must be a tag, not a digest: {tag}")
    if pinned.digest is None or (pinned.registry, pinned.repository, pinned.tag) != (
        tag.registry, tag.repository, tag.tag,
    ):  # fmt: skip
        raise Broken(f"{dockerfile}: PYTHON_BASE_PINNED must be {tag}@sha256:..., got {pinned}")
    return tag, pinned


def base(dockerfile: Path, *, verify: bool, update: bool) -> str:
    tag, pinned = base_args(dockerfile)
    if update:
        body, _ = Anonymous().manifest(tag)
        current = "sha256:" + hashlib.sha256(body).hexdigest()
        new = Ref(pinned.registry, pinned.repository, pinned.tag, current)
        index_platforms(Anonymous(), new, PLATFORMS)
        text = dockerfile.read_text(encoding="utf-8")
        old_line = next(
            m.group(0) for m in _ARG.finditer(text) if m.group(1) == "PYTHON_BASE_PINNED"
        )
        dockerfile.write_text(
            text.replace(old_line, f"ARG PYTHON_BASE_PINNED={new}"), encoding="utf-8"
        )
        pinned = new
        print(f"{dockerfile}: PYTHON_BASE_PINNED={new}", file=sys.stderr)
    elif verify:
        client = Anonymous()
        index_platforms(client, pinned, PLATFORMS)
        body, _ = client.manifest(tag)
        current = "sha256:" + hashlib.sha256(body).hexdigest()
        if current != pinned.digest:
            print(
                f"::notice title=base image moved::{tag} is now {current}; releases keep building "
                f"on the pinned {pinned.digest} until `python scripts/release_image.py base "
                "--update` moves the pin (docs/action.md, The base image)",
                file=sys.stderr,
            )
    print(str(pinned))
    return str(pinned)


def metadata_digest(path: Path) -> str:
    try:
        digest = json.loads(path.read_text(encoding="utf-8"))["containerimage.digest"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise Broken(f"{path}: no containerimage.digest ({exc})") from None
    if not isinstance(digest, str) or not DIGEST.fullmatch(digest):
        raise Broken(f"{path}: containerimage.digest is not sha256:<64 hex>: {digest!r}")
    return digest


def same_manifest(image: str, digest: str) -> None:
    body, _ = Anonymous().manifest(Ref.parse(image))
    got = "sha256:" + hashlib.sha256(body).hexdigest()
    if got != digest:
        raise Broken(f"{image} names {got}, not the released {digest}")


def major_version(image: str) -> str:
    """The ``X.Y.Z`` release ``IMAGE:vX`` names: the highest such tag on the same index;
    ``""`` when there is no ``:vX`` yet (the first release of that major version)."""
    ref = Ref.parse(image)
    major = re.fullmatch(r"v(\d+)", ref.tag or "")
    if major is None or ref.digest is not None:
        raise Broken(f"{image}: name the major tag, IMAGE:vX")
    client = Anonymous()
    status, body, _ = client.request(ref, f"manifests/{ref.tag}")
    if status == 404:
        return ""
    if status != 200:
        raise Refused(f"{ref}: HTTP {status} for its manifest")
    digest = "sha256:" + hashlib.sha256(body).hexdigest()
    status, listing, _ = client.request(ref, "tags/list?n=10000")
    if status != 200:
        raise Refused(f"{ref}: HTTP {status} for its tag list")
    same: list[tuple[int, int, int]] = []
    for tag in json.loads(listing).get("tags") or []:
        release = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", str(tag))
        if release is None or release[1] != major[1]:
            continue
        tagged, _ = client.manifest(Ref(ref.registry, ref.repository, str(tag), None))
        if "sha256:" + hashlib.sha256(tagged).hexdigest() == digest:
            same.append((int(release[1]), int(release[2]), int(release[3])))
    if not same:
        raise Broken(
            f"{ref} names {digest}, which no X.Y.Z tag names; point it at the release it "
            f"stands for (docker buildx imagetools create --tag {ref} IMAGE:X.Y.Z), then "
            "re-run this job"
        )
    return ".".join(map(str, max(same)))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_base = sub.add_parser("base", help="print (and check) the pinned base image")
    p_base.add_argument("--dockerfile", type=Path, default=ROOT / "Dockerfile")
    p_base.add_argument("--verify", action="store_true")
    p_base.add_argument("--update", action="store_true")
    p_digest = sub.add_parser("digest", help="the index digest in a buildx metadata file")
    p_digest.add_argument("metadata", type=Path)
    p_public = sub.add_parser("public", help="pull IMAGE@DIGEST's parts with no credentials")
    p_public.add_argument("image")
    p_public.add_argument("--platform", action="append", required=True)
    p_same = sub.add_parser("same-manifest", help="IMAGE:TAG names exactly DIGEST")
    p_same.add_argument("image")
    p_same.add_argument("digest")
    p_major = sub.add_parser("major-version", help="the X.Y.Z release IMAGE:vX names")
    p_major.add_argument("image")
    opts = parser.parse_args(argv)
    try:
        if opts.command == "base":
            base(opts.dockerfile, verify=opts.verify, update=opts.update)
        elif opts.command == "digest":
            print(metadata_digest(opts.metadata))
        elif opts.command == "public":
            check_public(opts.image, opts.platform)
        elif opts.command == "major-version":
            print(major_version(opts.image))
        else:
            same_manifest(opts.image, opts.digest)
    except Refused as exc:
        print(f"::error title=image not public::{exc}", file=sys.stderr)
        return 1
    except Broken as exc:
        print(f"::error title=release refused::{exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
