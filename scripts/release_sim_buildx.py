"""``docker buildx`` for the release simulation, where buildx is not to be had (#25).

Debian 12 packages no buildx, so scripts/simulate_release.py puts this behind ``docker
buildx`` and implements exactly what .github/workflows/release.yml calls, with the same
results, refusing anything else:

* ``create ...``: nothing to create (the engine's own BuildKit builds every platform);
* ``build --platform A,B --build-arg K=V --label K=V --provenance=false --sbom=false
  --tag IMAGE:TAG --metadata-file FILE --push CONTEXT``: per platform ``DOCKER_BUILDKIT=1
  docker build --platform P --network host`` (arm64 under QEMU; the simulation's engine
  has no bridge network) and a push as ``IMAGE:TAG-sim-ARCH``; then one OCI index over
  those manifests, pushed as ``IMAGE:TAG``, and ``containerimage.digest`` (the index's)
  in FILE, as buildx writes it;
* ``imagetools create --tag IMAGE:TAG SOURCE@DIGEST``: the source's manifest bytes put
  under the tag, so the tag names the same digest.

Registry calls use the credentials ``docker login`` stored (plain HTTP: loopback only).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

REAL_DOCKER = "/usr/bin/docker"
MANIFEST_ACCEPT = (
    "application/vnd.oci.image.index.v1+json, "
    "application/vnd.docker.distribution.manifest.list.v2+json, "
    "application/vnd.docker.distribution.manifest.v2+json, "
    "application/vnd.oci.image.manifest.v1+json"
)


def split(ref: str) -> tuple[str, str, str]:
    host, _, rest = ref.partition("/")
    name, sep, digest = rest.partition("@")
    if sep:
        return host, name, digest
    name, _, tag = name.rpartition(":")
    return host, name, tag


def auth_header(host: str) -> dict[str, str]:
    folder = Path(os.environ.get("DOCKER_CONFIG") or Path.home() / ".docker")
    try:
        auths = json.loads((folder / "config.json").read_text()).get("auths", {})
    except (OSError, ValueError):
        return {}
    token = (auths.get(host) or {}).get("auth")
    return {"Authorization": f"Basic {token}"} if token else {}


def get_manifest(ref: str) -> tuple[bytes, str]:
    host, name, reference = split(ref)
    headers = {"Accept": MANIFEST_ACCEPT, **auth_header(host)}
    url = f"http://{host}/v2/{name}/manifests/{reference}"
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=60) as r:
        return r.read(), r.headers["Content-Type"].split(";")[0]


def put_manifest(ref: str, body: bytes, media_type: str) -> str:
    host, name, tag = split(ref)
    headers = {"Content-Type": media_type, **auth_header(host)}
    url = f"http://{host}/v2/{name}/manifests/{tag}"
    with urllib.request.urlopen(
        urllib.request.Request(url, body, headers, method="PUT"), timeout=60
    ):
        pass
    return "sha256:" + hashlib.sha256(body).hexdigest()


def docker(*args: str, env: dict[str, str] | None = None) -> None:
    done = subprocess.run([REAL_DOCKER, *args], env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"buildx (simulated): docker {args[0]} failed (exit {done.returncode})")


def build_parser() -> argparse.ArgumentParser:
    """Exactly the options the release passes: anything else is refused, not ignored."""
    parser = argparse.ArgumentParser(prog="docker buildx build (simulated)")
    parser.add_argument("--platform", required=True)
    parser.add_argument("--build-arg", action="append", default=[])
    parser.add_argument("--label", action="append", default=[])
    parser.add_argument("--provenance", choices=("false",), required=True)
    parser.add_argument("--sbom", choices=("false",), required=True)
    parser.add_argument("--tag", required=True)
    parser.add_argument("--metadata-file", required=True, type=Path)
    parser.add_argument("--push", action="store_true", required=True)
    parser.add_argument("context")
    return parser


def build(argv: list[str]) -> int:
    opts = build_parser().parse_args(argv)
    entries: list[dict[str, Any]] = []
    for platform in opts.platform.split(","):
        os_name, arch = platform.split("/")
        one = f"{opts.tag}-sim-{arch}"
        args = ["build", "--platform", platform, "--network", "host", "--tag", one]
        for value in opts.build_arg:
            args += ["--build-arg", value]
        for value in opts.label:
            args += ["--label", value]
        docker(*args, opts.context, env={**os.environ, "DOCKER_BUILDKIT": "1"})
        docker("push", one)
        body, media_type = get_manifest(one)
        entries.append(
            {
                "mediaType": media_type,
                "digest": "sha256:" + hashlib.sha256(body).hexdigest(),
                "size": len(body),
                "platform": {"os": os_name, "architecture": arch},
            }
        )
    index = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": entries,
        }
    ).encode()
    digest = put_manifest(opts.tag, index, "application/vnd.oci.image.index.v1+json")
    opts.metadata_file.write_text(
        json.dumps({"containerimage.digest": digest, "image.name": opts.tag}, indent=2)
    )
    print(f"buildx (simulated): pushed {opts.tag} = {digest} ({opts.platform})")
    return 0


def imagetools(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="docker buildx imagetools create (simulated)")
    parser.add_argument("command", choices=("create",))
    parser.add_argument("--tag", required=True)
    parser.add_argument("source")
    opts = parser.parse_args(argv)
    body, media_type = get_manifest(opts.source)
    digest = put_manifest(opts.tag, body, media_type)
    print(f"buildx (simulated): {opts.tag} = {digest}")
    return 0


def main(argv: list[str]) -> int:
    if not argv:
        raise SystemExit("buildx (simulated): give a command")
    command, rest = argv[0], argv[1:]
    if command == "create":
        print("buildx (simulated): the engine's own BuildKit builds every platform")
        return 0
    if command == "build":
        return build(rest)
    if command == "imagetools":
        return imagetools(rest)
    raise SystemExit(f"buildx (simulated): {command!r} is not something the release calls")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
