"""The report bundle a gate run leaves for the fork companion: written here, read back there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalkit._spec.config import validate_config_name
from evalkit._util import bounded as _bounded
from evalkit._util.atomic import write_bytes_atomic
from evalkit.errors import InputError
from evalkit.github.context import GitHubContext

COMMENT_BODY_FILE = "comment.md"
COMMENT_META_FILE = "comment.json"
# The most we read of a fork run's comment body (it is capped to 65,536 chars anyway).
MAX_BUNDLE_BYTES = 1024 * 1024


def write_bundle(ctx: GitHubContext, output_dir: Path, config_name: str, body: str) -> Path:
    """Write the comment body (always) and, on a PR, what it is for; return the body's path."""
    body_path = output_dir / COMMENT_BODY_FILE
    write_bytes_atomic(body_path, body.encode("utf-8"))
    if ctx.pull_request is not None:
        meta = {
            "config_name": config_name,
            "pr_number": ctx.pull_request.number,
            "head_sha": ctx.pull_request.head_sha,
            "repository": ctx.repository,
        }
        write_bytes_atomic(
            output_dir / COMMENT_META_FILE, json.dumps(meta, indent=2).encode("utf-8")
        )
    return body_path


def read_bundle(report_dir: Path) -> tuple[dict[str, Any], str]:
    """The bundle's metadata (checked: a PR number, a config name) and its body."""
    meta_path = report_dir / COMMENT_META_FILE
    body_path = report_dir / COMMENT_BODY_FILE
    for path in (meta_path, body_path):
        if not path.is_file() or path.is_symlink():
            raise InputError(
                f"{path}: missing; download the gate run's report-dir artifact into {report_dir}"
            )
        if path.stat().st_size > MAX_BUNDLE_BYTES:
            raise InputError(f"{path}: larger than {MAX_BUNDLE_BYTES} bytes; refusing it")
    try:
        meta = _bounded.loads(meta_path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InputError(f"{meta_path}: not valid JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise InputError(f"{meta_path}: expected a JSON object")
    number = meta.get("pr_number")
    if not isinstance(number, int) or isinstance(number, bool) or number <= 0:
        raise InputError(f"{meta_path}: pr_number must be a positive integer, got {number!r}")
    name = meta.get("config_name")
    if not isinstance(name, str):
        raise InputError(f"{meta_path}: config_name must be a string")
    validate_config_name(name)
    body = body_path.read_text(encoding="utf-8", errors="replace")
    return meta, body


def bundle_dirs(report_dir: Path) -> list[Path]:
    """The bundle in ``report_dir``, or one per config in its subfolders."""
    if (report_dir / COMMENT_META_FILE).exists() or not report_dir.is_dir():
        return [report_dir]
    found = sorted(
        d for d in report_dir.iterdir() if d.is_dir() and (d / COMMENT_META_FILE).is_file()
    )
    return found or [report_dir]


__all__ = [
    "COMMENT_BODY_FILE",
    "COMMENT_META_FILE",
    "MAX_BUNDLE_BYTES",
    "bundle_dirs",
    "read_bundle",
    "write_bundle",
]
