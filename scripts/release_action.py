"""Render the released action: this repository's action.yml pointed at the prebuilt image.

    python scripts/release_action.py --image docker://ghcr.io/skbugudi/evalkit-action@sha256:… \\
        --version 1.2.3 --source-sha <commit> --out DIR

The repository's action.yml says ``image: Dockerfile`` (CI, the container check and
``uses: ./`` build from source); the release workflow publishes the same file with
``image: docker://…`` to skbugudi/evalkit-action, so users' jobs pull the image instead of
building it (no PyPI at job time). Nothing else in action.yml changes. Writes
DIR/action.yml, DIR/LICENSE and DIR/README.md.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE_REPO = "skbugudi/evalkit"
ACTION_REPO = "skbugudi/evalkit-action"
_IMAGE_LINE = re.compile(r"^(  image: )Dockerfile\s*$", re.MULTILINE)
# A registry host may carry a port (the release simulation's registry on 127.0.0.1:PORT).
_IMAGE_REF = re.compile(
    r"^docker://[a-z0-9.-]+(:\d+)?(/[a-z0-9._-]+)+(:[\w.-]+|@sha256:[0-9a-f]{64})$"
)


def render_action_yml(text: str, image: str) -> str:
    """``text`` with its one ``image: Dockerfile`` line replaced by ``image: <image>``."""
    if not _IMAGE_REF.match(image):
        raise SystemExit(f"--image must be docker://REGISTRY/NAME:TAG or @sha256:DIGEST: {image}")
    rendered, count = _IMAGE_LINE.subn(lambda m: f"{m.group(1)}{image!r}".replace("'", '"'), text)
    if count != 1:
        raise SystemExit(
            f"action.yml must have exactly one 'image: Dockerfile' line, found {count}"
        )
    return rendered


def readme(version: str, source_sha: str, image: str) -> str:
    docs = f"https://github.com/{SOURCE_REPO}/blob/{source_sha}/docs/action.md"
    return (
        f"# evalkit-action {version}\n\n"
        f"The GitHub Action of [evalkit](https://github.com/{SOURCE_REPO}), built from "
        f"{SOURCE_REPO}@{source_sha}. This repository only publishes it: `action.yml` runs "
        f"the prebuilt image `{image.removeprefix('docker://')}`.\n\n"
        f"```yaml\n- uses: {ACTION_REPO}@v{version.split('.')[0]}\n```\n\n"
        f"Documentation: {docs}. Issues and source: https://github.com/{SOURCE_REPO}.\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="render the released action")
    parser.add_argument("--image", required=True)
    parser.add_argument("--version", required=True)
    parser.add_argument("--source-sha", required=True)
    parser.add_argument("--out", required=True, type=Path)
    opts = parser.parse_args(argv)
    if not re.fullmatch(r"\d+\.\d+\.\d+", opts.version):
        raise SystemExit(f"--version must be X.Y.Z, got {opts.version!r}")
    opts.out.mkdir(parents=True, exist_ok=True)
    action = render_action_yml((ROOT / "action.yml").read_text(encoding="utf-8"), opts.image)
    (opts.out / "action.yml").write_text(action, encoding="utf-8")
    shutil.copyfile(ROOT / "LICENSE", opts.out / "LICENSE")
    (opts.out / "README.md").write_text(
        readme(opts.version, opts.source_sha, opts.image), encoding="utf-8"
    )
    print(f"wrote {opts.out}/action.yml (image {opts.image})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
