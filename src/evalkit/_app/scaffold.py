"""``evalkit init``: a new project's files, from which the first gate passes."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from evalkit.errors import InputError

# Where each file goes in the project, and the packaged file it is a copy of.
FILES: tuple[tuple[str, str], ...] = (
    ("evalkit.yaml", "evalkit.yaml"),
    ("checks.yaml", "checks.yaml"),
    ("goldens.jsonl", "goldens.jsonl"),
    ("evalkit_target.py", "evalkit_target.py"),
    (".github/workflows/evalkit.yml", "evalkit.yml"),
)


def scaffold(folder: Path) -> tuple[str, ...]:
    """Write the project's files into ``folder`` (created if missing): their names in it."""
    from evalkit._util.atomic import write_text_atomic

    if folder.exists() and not folder.is_dir():
        raise InputError(f"{folder} is a file, not a folder: give evalkit init a folder")
    there = [name for name, _ in FILES if (folder / name).exists()]
    if there:
        raise InputError(
            f"evalkit init writes nothing: {', '.join(str(folder / n) for n in there)} "
            "already exist(s); move them aside or run it in another folder"
        )
    source = resources.files("evalkit._app").joinpath("scaffold_files")
    for name, packaged in FILES:
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(target, source.joinpath(packaged).read_text(encoding="utf-8"))
    return tuple(name for name, _ in FILES)
