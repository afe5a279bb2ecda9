"""A command never writes over one of its own inputs."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from evalkit._util.stdout_path import is_stdout
from evalkit.errors import InputError


def refuse_overwriting_inputs(
    outputs: Mapping[str, Path | None], inputs: Mapping[str, Path | None]
) -> None:
    """Raise :class:`InputError` when an output path is an input, or two outputs coincide."""
    taken: dict[str, str] = {}  # by realpath: it follows links, and paths not yet made
    for what, path in inputs.items():
        if path is not None:
            taken.setdefault(os.path.realpath(path), f"the {what}")
    for flag, path in outputs.items():
        if path is None or is_stdout(path):  # stdout is no file an input can be
            continue
        key = os.path.realpath(path)
        if key in taken:
            raise InputError(
                f"{flag} {path} is {taken[key]}; writing there would destroy it: "
                "choose another path"
            )
        taken[key] = f"also the path of {flag}"
