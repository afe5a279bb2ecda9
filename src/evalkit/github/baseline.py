"""What every baseline store returns, the light artefact check, and the local-file store.

A store answers one question — "where is the baseline artefact for config X?" — with a
:class:`BaselineFetch`. ``missing`` and ``expired`` are answers, not errors: the gate
turns them into the ``no-baseline`` verdict (blocking only with ``require_baseline``).
A GitHub failure is *not* an answer and raises, because treating an outage as "no
baseline" would wave a regression through.
"""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evalkit._atomic import write_bytes_atomic
from evalkit.errors import ArtifactError, ConfigError

BaselineStatus = Literal["found", "missing", "expired"]

# The largest artefact we accept from a store (compressed or not); far above any real
# eval, far below what would hurt the runner.
MAX_ARTEFACT_BYTES = 200 * 1024 * 1024

_CONFIG_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


@dataclass(frozen=True)
class BaselineFetch:
    """The outcome of asking a store for a baseline."""

    status: BaselineStatus
    path: Path | None  # a local file when found
    source: str  # "artifact", "branch", "file" or "none"
    detail: str  # one human sentence: where it came from, or why there is none
    sha: str | None = None  # the commit the baseline was made from, when known

    @property
    def found(self) -> bool:
        return self.status == "found"


@dataclass(frozen=True)
class PromoteResult:
    """Where a promoted artefact went."""

    source: str
    location: str  # path, or branch:path
    detail: str
    sha: str | None = None


def validate_config_name(name: str) -> str:
    """A config name is used in file names and comment markers: keep it plain."""
    if not _CONFIG_NAME.match(name):
        raise ConfigError(
            f"config name {name!r} must be 1-100 characters of letters, digits, '.', '_' or "
            "'-', starting with a letter or digit; set the config-name input"
        )
    return name


def artefact_file_names(config_name: str) -> tuple[str, str]:
    """The file names a stored baseline for ``config_name`` may have."""
    return f"{config_name}.json", f"{config_name}.json.gz"


def check_artefact_bytes(data: bytes, origin: str) -> None:
    """A light sanity check before the gate reads the artefact properly.

    The gate's reader validates the schema; this only catches "that is not an evalkit
    artefact at all" early, with a message naming where the bytes came from.
    """
    raw = data
    if data[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise ArtifactError(f"{origin}: not a readable gzip file ({exc})") from None
        if len(raw) > MAX_ARTEFACT_BYTES:
            raise ArtifactError(f"{origin}: decompresses to more than {MAX_ARTEFACT_BYTES} bytes")
    try:
        document = json.loads(raw)
    except ValueError as exc:
        raise ArtifactError(f"{origin}: not valid JSON ({exc})") from None
    if not isinstance(document, dict) or "schema_version" not in document:
        raise ArtifactError(
            f"{origin}: not an evalkit run artefact (no schema_version); "
            "promote a baseline written by `evalkit run` or the gate"
        )


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temp file in the same directory and a rename."""
    write_bytes_atomic(path, data)


class FileStore:
    """A baseline kept as a plain file (committed, or restored by a cache step)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fetch(self) -> BaselineFetch:
        if not self.path.is_file():
            return BaselineFetch(
                status="missing",
                path=None,
                source="file",
                detail=f"no baseline file at {self.path}",
            )
        check_artefact_bytes(self.path.read_bytes(), str(self.path))
        return BaselineFetch(
            status="found", path=self.path, source="file", detail=f"baseline file {self.path}"
        )

    def promote(self, artefact: Path) -> PromoteResult:
        if artefact.resolve() != self.path.resolve():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_bytes_atomic(self.path, artefact.read_bytes())
        return PromoteResult(
            source="file", location=str(self.path), detail=f"baseline written to {self.path}"
        )


__all__ = [
    "MAX_ARTEFACT_BYTES",
    "BaselineFetch",
    "BaselineStatus",
    "FileStore",
    "PromoteResult",
    "artefact_file_names",
    "check_artefact_bytes",
    "validate_config_name",
    "write_atomic",
]
