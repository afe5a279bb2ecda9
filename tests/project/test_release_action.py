"""The released action.yml: this one, pointed at the prebuilt image, nothing else changed."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("release_action", ROOT / "scripts/release_action.py")
assert _spec is not None
assert _spec.loader is not None
release: Any = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(release)
main, render_action_yml = release.main, release.render_action_yml

DIGEST = "docker://ghcr.io/skbugudi/evalkit-action@sha256:" + "a" * 64


def test_release_action_points_at_the_image_and_keeps_everything_else(tmp_path: Path) -> None:
    assert (
        main(
            [
                "--image",
                DIGEST,
                "--version",
                "1.2.3",
                "--source-sha",
                "f" * 40,
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    here = yaml.safe_load((ROOT / "action.yml").read_text())
    released = yaml.safe_load((tmp_path / "action.yml").read_text())
    assert here["runs"]["image"] == "Dockerfile"  # CI and the container check build locally
    assert released["runs"] == {**here["runs"], "image": DIGEST}
    assert {k: v for k, v in released.items() if k != "runs"} == {
        k: v for k, v in here.items() if k != "runs"
    }
    assert "uses: skbugudi/evalkit-action@v1" in (tmp_path / "README.md").read_text()
    check = subprocess.run(
        [
            str(Path(sys.executable).parent / "check-jsonschema"),
            "--builtin-schema",
            "vendor.github-actions",
            str(tmp_path / "action.yml"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.parametrize(
    "image", ["ghcr.io/x/y:v1", "docker://ghcr.io/x/y", "docker://ghcr.io/x/y:v1;rm -rf"]
)
def test_release_action_refuses_a_malformed_image(image: str) -> None:
    with pytest.raises(SystemExit, match="--image must be"):
        render_action_yml("runs:\n  image: Dockerfile\n", image)


def test_release_action_needs_exactly_one_image_line() -> None:
    with pytest.raises(SystemExit, match="exactly one"):
        render_action_yml("runs:\n  image: other\n", DIGEST)
