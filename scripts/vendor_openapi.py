"""Vendor the slice of GitHub's OpenAPI description that evalkit's GitHub layer uses.

The fake GitHub server in tests/github validates every request it receives and every
response it sends against GitHub's own published description, so the fake cannot drift
into a GitHub that does not exist. The full description is ~10 MB; this script keeps
only the operations evalkit calls plus every component they reference.

Reproduce (needs npm and the npm registry)::

    uv run python scripts/vendor_openapi.py            # rewrite tests/github/openapi/
    uv run python scripts/vendor_openapi.py --check    # exit 1 if the vendored copy differs

The source is the npm package ``@octokit/openapi`` at the pinned version (MIT, its
licence is copied next to the trimmed file). Operations are copied verbatim except
that media-type ``examples`` are dropped (size only; validation never reads them).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PACKAGE = "@octokit/openapi"
VERSION = "23.0.2"
SOURCE_FILE = "package/generated/api.github.com.json"
LICENSE_FILE = "package/LICENSE"

OUT_DIR = Path(__file__).resolve().parent.parent / "tests" / "github" / "openapi"
SPEC_OUT = "api.github.com.trimmed.json"

# (path template, method) of every REST call evalkit makes.
OPERATIONS: tuple[tuple[str, str], ...] = (
    ("/repos/{owner}/{repo}", "get"),
    ("/repos/{owner}/{repo}/actions/artifacts", "get"),
    ("/repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}", "get"),
    ("/repos/{owner}/{repo}/actions/runs/{run_id}", "get"),
    ("/repos/{owner}/{repo}/issues/{issue_number}/comments", "get"),
    ("/repos/{owner}/{repo}/issues/{issue_number}/comments", "post"),
    ("/repos/{owner}/{repo}/issues/comments/{comment_id}", "patch"),
    ("/repos/{owner}/{repo}/pulls/{pull_number}", "get"),
    ("/repos/{owner}/{repo}/contents/{path}", "get"),
    ("/repos/{owner}/{repo}/git/blobs", "post"),
    ("/repos/{owner}/{repo}/git/blobs/{file_sha}", "get"),
    ("/repos/{owner}/{repo}/git/trees", "post"),
    ("/repos/{owner}/{repo}/git/commits", "post"),
    ("/repos/{owner}/{repo}/git/commits/{commit_sha}", "get"),
    ("/repos/{owner}/{repo}/git/ref/{ref}", "get"),
    ("/repos/{owner}/{repo}/git/refs", "post"),
    ("/repos/{owner}/{repo}/git/refs/{ref}", "patch"),
    ("/repos/{owner}/{repo}/git/tags/{tag_sha}", "get"),
    ("/repos/{owner}/{repo}/compare/{basehead}", "get"),
    ("/user", "get"),
)


def fetch_package(workdir: Path) -> tuple[dict[str, Any], bytes, str]:
    """npm-pack the pinned package; return (description, licence bytes, tarball sha256)."""
    subprocess.run(
        ["npm", "pack", f"{PACKAGE}@{VERSION}", "--silent", "--pack-destination", str(workdir)],
        check=True,
        cwd=workdir,
        stdout=subprocess.DEVNULL,
    )
    tarballs = list(workdir.glob("*.tgz"))
    if len(tarballs) != 1:
        raise SystemExit(f"npm pack produced {len(tarballs)} tarballs in {workdir}")
    digest = hashlib.sha256(tarballs[0].read_bytes()).hexdigest()
    with tarfile.open(tarballs[0], "r:gz") as tar:
        spec_member = tar.extractfile(SOURCE_FILE)
        license_member = tar.extractfile(LICENSE_FILE)
        if spec_member is None or license_member is None:
            raise SystemExit(f"{SOURCE_FILE} or {LICENSE_FILE} missing from the package")
        spec = json.load(spec_member)
        licence = license_member.read()
    return spec, licence, digest


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def _drop_examples(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _drop_examples(v) for k, v in node.items() if k != "examples"}
    if isinstance(node, list):
        return [_drop_examples(v) for v in node]
    return node


def trim(spec: dict[str, Any]) -> dict[str, Any]:
    """The description reduced to OPERATIONS and the components they reach."""
    paths: dict[str, dict[str, Any]] = {}
    for path, method in OPERATIONS:
        try:
            operation = spec["paths"][path][method]
        except KeyError:
            raise SystemExit(f"{method.upper()} {path} is not in {PACKAGE}@{VERSION}") from None
        paths.setdefault(path, {})[method] = _drop_examples(operation)

    components: dict[str, dict[str, Any]] = {}
    pending = list(_refs(paths))
    seen: set[str] = set()
    while pending:
        ref = pending.pop()
        if ref in seen:
            continue
        seen.add(ref)
        if not ref.startswith("#/components/"):
            raise SystemExit(f"unexpected non-local $ref {ref}")
        _, _, kind, name = ref.split("/", 3)
        target = _drop_examples(spec["components"][kind][name])
        components.setdefault(kind, {})[name] = target
        pending.extend(_refs(target))

    return {
        "openapi": spec["openapi"],
        "info": spec["info"],
        "servers": spec.get("servers", []),
        "paths": paths,
        "components": components,
    }


def render(trimmed: dict[str, Any], digest: str) -> dict[str, str]:
    """File name -> exact text, so --check can compare byte for byte."""
    source = {
        "package": PACKAGE,
        "version": VERSION,
        "file": SOURCE_FILE.removeprefix("package/"),
        "tarball_sha256": digest,
        "operations": [f"{m.upper()} {p}" for p, m in OPERATIONS],
        "regenerate": "uv run python scripts/vendor_openapi.py",
    }
    return {
        SPEC_OUT: json.dumps(trimmed, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
        "SOURCE.json": json.dumps(source, indent=2) + "\n",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        spec, licence, digest = fetch_package(Path(tmp))
    files = render(trim(spec), digest)
    files_bytes = {name: text.encode("utf-8") for name, text in files.items()}
    files_bytes["LICENSE"] = licence
    out: Path = args.out
    if args.check:
        stale = [n for n, data in files_bytes.items() if (out / n).read_bytes() != data]
        if stale:
            print(f"vendored OpenAPI is out of date: {', '.join(stale)}", file=sys.stderr)
            return 1
        print(f"vendored OpenAPI matches {PACKAGE}@{VERSION}")
        return 0
    out.mkdir(parents=True, exist_ok=True)
    for name, data in files_bytes.items():
        (out / name).write_bytes(data)
    size = len(files_bytes[SPEC_OUT])
    print(f"wrote {out / SPEC_OUT} ({size} bytes, {len(OPERATIONS)} operations)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
