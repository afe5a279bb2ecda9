"""Whether this release moves the major tags users pin (``:vX``, ``@vX``): only forward (#48).

    python scripts/release_major.py --version 1.4.1 --major v1 \\
        --image-version "$(python scripts/release_image.py major-version IMAGE:v1)" \\
        --tags ACTION_REPO_LS_REMOTE_FILE >> "$GITHUB_OUTPUT"

The release workflow asks it after the image is pushed and public. The release the major
tags stand for now is the newer of two: the version whose ``X.Y.Z`` image tag names the
same index as ``IMAGE:vX`` (``--image-version``, empty when there is no ``:vX`` yet) and
the ``vX.Y.Z`` tag of the action repository on the commit its ``vX`` tag names (read from
``git ls-remote --tags`` output, ``--tags``). A release at least as new moves both; an
older one (a patch on an older line, 1.4.1 after 1.5.0) moves neither, and the job
summary says so: every ``@v1`` user stays on the newer release.

Prints ``move=true|false`` and ``lease=SHA`` (what the action repository's ``vX`` names
now, empty when absent: the publish step pushes ``vX`` only from there, atomically with
``main`` and ``vX.Y.Z``). Standard library only, like the other release scripts.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

Version = tuple[int, int, int]
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")
_RELEASE_TAG = re.compile(r"refs/tags/v(\d+)\.(\d+)\.(\d+)")


class Refused(Exception):
    """What the major tags name cannot be told: nothing moves until a person looks."""


def parse_version(text: str) -> Version:
    match = _VERSION.fullmatch(text.strip().removeprefix("v"))
    if match is None:
        raise Refused(f"{text!r} is not a version X.Y.Z")
    major, minor, patch = (int(part) for part in match.groups())
    return major, minor, patch


def shown(version: Version) -> str:
    return ".".join(map(str, version))


def repository_release(ls_remote: str, major: str) -> tuple[Version | None, str]:
    """The release the action repository's ``major`` tag names, and that tag's own sha.

    ``ls_remote`` is ``git ls-remote --tags`` output (``SHA<TAB>REF`` lines; an annotated
    tag's commit on a ``REF^{}`` line).  No ``major`` tag: ``(None, "")``.
    """
    own: dict[str, str] = {}
    peeled: dict[str, str] = {}
    for line in ls_remote.splitlines():
        sha, _, ref = line.strip().partition("\t")
        if ref.endswith("^{}"):
            peeled[ref.removesuffix("^{}")] = sha
        elif ref:
            own[ref] = sha
    major_ref = f"refs/tags/{major}"
    if major_ref not in own:
        return None, ""
    target = peeled.get(major_ref, own[major_ref])
    same: list[Version] = []
    for ref, sha in own.items():
        match = _RELEASE_TAG.fullmatch(ref)
        if match and peeled.get(ref, sha) == target:
            same.append((int(match[1]), int(match[2]), int(match[3])))
    if not same:
        raise Refused(
            f"the action repository's {major} names {target[:12]}, which no vX.Y.Z tag names; "
            f"point {major} at the release it stands for, then re-run this job"
        )
    return max(same), own[major_ref]


def decide(
    version: Version, image_version: Version | None, repository_version: Version | None
) -> tuple[bool, str]:
    """Whether the major tags move to ``version``, and the sentence that says why."""
    known = [v for v in (image_version, repository_version) if v is not None]
    if not known:
        return True, f"v{shown(version)} is the first release of its major version"
    current = max(known)
    if version >= current:
        return True, f"v{shown(version)} is not older than v{shown(current)}"
    return False, (
        f"v{shown(version)} is older than v{shown(current)}, the release the major tags "
        f"name (image: {_or_none(image_version)}, action repository: "
        f"{_or_none(repository_version)}): neither moved, so every user of the major tag stays "
        f"on v{shown(current)}; pin @v{shown(version)} to use this release"
    )


def _or_none(version: Version | None) -> str:
    return "none" if version is None else f"v{shown(version)}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", required=True)
    parser.add_argument("--major", required=True)
    parser.add_argument("--image-version", default="")
    parser.add_argument("--tags", required=True, type=Path)
    opts = parser.parse_args(argv)
    try:
        version = parse_version(opts.version)
        if opts.major != f"v{version[0]}":
            raise Refused(f"--major {opts.major} is not the major version of {opts.version}")
        image = parse_version(opts.image_version) if opts.image_version.strip() else None
        repository, lease = repository_release(opts.tags.read_text(encoding="utf-8"), opts.major)
    except Refused as exc:
        print(f"::error title=release refused::{exc}", file=sys.stderr)
        return 1
    move, why = decide(version, image, repository)
    if not move:
        print(f"::notice title=major tag not moved::{why}", file=sys.stderr)
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary:
            with open(summary, "a", encoding="utf-8") as out:
                out.write(f"### {opts.major} not moved\n\n{why}.\n")
    print(f"move={'true' if move else 'false'}")
    print(f"lease={lease}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
