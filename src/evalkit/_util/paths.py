"""A command never writes over one of its own inputs.

``evalkit export run.json --csv run.json`` would replace the artefact with its
CSV, and a gate whose output artefact is the configured baseline file would
compare the candidate with itself and pass.  Every command that writes checks
its output paths against its input paths (and each other) first.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from evalkit._util.stdout_path import is_stdout
from evalkit.errors import InputError


def _same_file_key(path: Path) -> str:
    # realpath follows symlinks and works for files that do not exist yet.
    return os.path.realpath(path)


def refuse_overwriting_inputs(
    outputs: Mapping[str, Path | None], inputs: Mapping[str, Path | None]
) -> None:
    """Raise :class:`InputError` when an output path is an input, or two outputs coincide."""
    taken: dict[str, str] = {}
    for what, path in inputs.items():
        if path is not None:
            taken.setdefault(_same_file_key(path), f"the {what}")
    for flag, path in outputs.items():
        if path is None or is_stdout(path):  # stdout is no file an input can be
            continue
        key = _same_file_key(path)
        if key in taken:
            raise InputError(
                f"{flag} {path} is {taken[key]}; writing there would destroy it: "
                "choose another path"
            )
        taken[key] = f"also the path of {flag}"
