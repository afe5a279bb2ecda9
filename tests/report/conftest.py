"""The browser the report tests share: one headless Chromium per test module."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from .cdp import Browser, find_chromium


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """Debian's ``chromium``; skipped with a reason when absent, except under CI."""
    exe = find_chromium()
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed; CI must run: apt-get install -y chromium")
        pytest.skip("chromium not installed (apt-get install -y chromium); required under CI")
    b = Browser(exe, tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield b
    finally:
        b.close()
