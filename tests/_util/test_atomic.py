from __future__ import annotations

import stat
from pathlib import Path

import pytest

from evalkit._util.atomic import NEW_FILE_MODE, atomic_file, write_bytes_atomic, write_text_atomic


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_new_file_is_readable_by_others_not_0600(tmp_path: Path) -> None:
    path = write_bytes_atomic(tmp_path / "sub" / "a.json", b"{}")
    assert path.read_bytes() == b"{}"
    assert mode(path) == NEW_FILE_MODE


def test_replacing_keeps_the_existing_mode(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("old")
    path.chmod(0o640)
    write_text_atomic(path, "new\r\n")
    assert path.read_bytes() == b"new\r\n"  # written exactly, no newline translation
    assert mode(path) == 0o640


def test_failure_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("old")

    def write_half_then_fail() -> None:
        with atomic_file(path) as handle:
            handle.write(b"half")
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        write_half_then_fail()
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]
