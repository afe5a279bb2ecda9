"""Talking to the Actions runner: step outputs, the step summary, workflow commands."""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from evalkit._util.visible import visible
from evalkit.errors import ConfigError

# GitHub refuses to upload a step summary over 1 MiB (and shows an error instead),
# so we stay a safe margin below it.
SUMMARY_LIMIT_BYTES = 1024 * 1024 - 4096
# The runner shows at most 10 error annotations per step; more are dropped silently.
MAX_ERROR_ANNOTATIONS = 10

_OUTPUT_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def escape_data(text: str) -> str:
    """Escape a workflow-command message so it stays on one line and means itself."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow-command property value (``file=``, ``title=``...)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: str | int | None) -> str:
    """One workflow command line, e.g. ``::error file=a.yaml,line=3::text``."""
    props = ",".join(
        f"{key}={escape_property(str(value))}"
        for key, value in properties.items()
        if value is not None and str(value) != ""
    )
    head = f"::{name} {props}" if props else f"::{name}"
    return f"{head}::{escape_data(message)}"


@dataclass(frozen=True)
class Annotation:
    """An ``::error``/``::warning``/``::notice`` pointing at a file (and line) when known."""

    level: str
    message: str
    title: str | None = None
    file: str | None = None
    line: int | None = None

    def render(self) -> str:
        title = None if self.title is None else visible(self.title)
        return command(
            self.level, visible(self.message), file=self.file, line=self.line, title=title
        )


class Console:
    """Writes workflow commands and untrusted text to the step log (stdout)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def line(self, text: str) -> None:
        """A line we wrote ourselves (no untrusted content in it)."""
        self._stream.write(text + "\n")
        self._stream.flush()

    def mask(self, secret: str) -> None:
        """Ask the runner to redact ``secret`` (every line of it) from the log."""
        for part in secret.splitlines():
            if part.strip():
                self.line(command("add-mask", part))

    def annotate(self, annotation: Annotation) -> None:
        self.line(annotation.render())

    def notice(self, message: str) -> None:
        self.annotate(Annotation("notice", message))

    def warning(self, message: str, *, title: str | None = None) -> None:
        self.annotate(Annotation("warning", message, title=title))

    def error(self, message: str, *, title: str | None = None) -> None:
        self.annotate(Annotation("error", message, title=title))


def _delimiter_for(values: Iterable[str]) -> str:
    joined = "\n".join(values)
    while True:
        delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
        if delimiter not in joined:
            return delimiter


def write_outputs(path: Path, outputs: Mapping[str, str]) -> None:
    """Append step outputs to ``$GITHUB_OUTPUT`` in the multi-line heredoc form."""
    for name in outputs:
        if not _OUTPUT_NAME.match(name):
            raise ConfigError(f"step output name {name!r} is not a valid identifier")
    delimiter = _delimiter_for(outputs.values())
    with path.open("a", encoding="utf-8", newline="\n") as fh:
        for name, value in outputs.items():
            fh.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")


def truncate_utf8(text: str, limit_bytes: int, note: str) -> str:
    """``text`` if it fits in ``limit_bytes`` of UTF-8, else a cut prefix plus ``note``."""
    data = text.encode("utf-8")
    if len(data) <= limit_bytes:
        return text
    note_bytes = len(note.encode("utf-8"))
    if note_bytes > limit_bytes:
        note, note_bytes = "", 0  # no room even for the note: cut silently
    head = data[: limit_bytes - note_bytes].decode("utf-8", errors="ignore")
    # Cut at a line end so a markdown table row or tag is not left half-open.
    cut = head.rfind("\n")
    if cut > 0:
        head = head[: cut + 1]
    return head + note


def append_summary(path: Path, markdown: str) -> int:
    """Append ``markdown`` to ``$GITHUB_STEP_SUMMARY``, kept under GitHub's 1 MiB limit.

    Returns the number of bytes written.
    """
    existing = path.stat().st_size if path.exists() else 0
    note = (
        "\n\n> **evalkit:** the summary was cut to stay under GitHub's 1 MiB step-summary "
        "limit; the full report is in the report files.\n"
    )
    if not markdown.endswith("\n"):
        markdown += "\n"
    text = truncate_utf8(markdown, max(0, SUMMARY_LIMIT_BYTES - existing), note)
    with path.open("a", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    return len(text.encode("utf-8"))


def env_path(env: Mapping[str, str], name: str) -> Path | None:
    """The file a runner variable such as ``GITHUB_OUTPUT`` names, or None when unset."""
    value = env.get(name, "").strip()
    return Path(value) if value else None


def relative_to_workspace(path: Path, workspace: Path) -> str:
    """``path`` as seen from the workspace root (how annotations and later steps want it)."""
    try:
        return Path(os.path.relpath(path.resolve(), workspace.resolve())).as_posix()
    except ValueError:  # different drive on Windows; never on the runner's Linux
        return path.as_posix()
