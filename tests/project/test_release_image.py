"""scripts/release_image.py against a registry on 127.0.0.1 (the release's image checks, #25).

The registry (fake_registry.py) answers with the Bearer token flow of ghcr.io and Docker
Hub; private, it gives an anonymous client no token, ``basic`` asks for credentials.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest
from fake_registry import REPO, Registry, running

from helpers.scripts import load_script

tool: ModuleType = load_script("scripts/release_image.py")


@pytest.fixture(name="registry")
def registry_fixture() -> Iterator[tuple[Registry, str]]:
    registry = Registry()
    with running(registry) as host:
        yield registry, host


BOTH = ["--platform", "linux/amd64", "--platform", "linux/arm64"]


def test_a_public_two_platform_index_passes(
    registry: tuple[Registry, str], capsys: pytest.CaptureFixture[str]
) -> None:
    reg, host = registry
    digest = reg.add_index(["amd64", "arm64"])
    assert tool.main(["public", f"{host}/{REPO}@{digest}", *BOTH]) == 0
    out = capsys.readouterr().out
    assert "anonymous pull ok: linux/amd64" in out
    assert "anonymous pull ok: linux/arm64" in out
    # every part was asked for: both configs and both layers
    asked = {s.rsplit("/", 1)[1] for s in reg.seen if s.startswith(f"HEAD /v2/{REPO}/blobs/")}
    assert asked == reg.blobs


@pytest.mark.parametrize("mode", ["private", "basic"])
def test_a_private_image_stops_the_release(
    registry: tuple[Registry, str], mode: str, capsys: pytest.CaptureFixture[str]
) -> None:
    reg, host = registry
    digest = reg.add_index(["amd64", "arm64"])
    reg.mode = mode
    assert tool.main(["public", f"{host}/{REPO}@{digest}", *BOTH]) == 1
    err = capsys.readouterr().err
    assert err.startswith("::error title=image not public::")


@pytest.mark.parametrize(
    ("build", "error"),
    [
        (
            lambda r: r.add_index(["amd64"]),
            "the index has no linux/arm64 image (it has linux/amd64)",
        ),
        (lambda r: r.add_image("amd64"), "a single-platform manifest"),
    ],
    ids=["index-without-arm64", "not-an-index"],
)
def test_what_lacks_a_platform_is_refused(
    registry: tuple[Registry, str],
    capsys: pytest.CaptureFixture[str],
    build: Callable[[Registry], str],
    error: str,
) -> None:
    reg, host = registry
    digest = build(reg)
    assert tool.main(["public", f"{host}/{REPO}@{digest}", *BOTH]) == 1
    assert error in capsys.readouterr().err


def test_bytes_that_do_not_hash_to_the_digest_are_refused(
    registry: tuple[Registry, str], capsys: pytest.CaptureFixture[str]
) -> None:
    reg, host = registry
    digest = reg.add_index(["amd64", "arm64"])
    other = reg.add_index(["amd64"])
    reg.manifests[digest] = reg.manifests[other]
    assert tool.main(["public", f"{host}/{REPO}@{digest}", *BOTH]) == 1
    assert "does not hash to the digest" in capsys.readouterr().err


def test_same_manifest(registry: tuple[Registry, str]) -> None:
    reg, host = registry
    digest = reg.add_index(["amd64", "arm64"], tag="v1")
    assert tool.main(["same-manifest", f"{host}/{REPO}:v1", digest]) == 0
    reg.add_index(["arm64", "amd64"], tag="v1")  # the same images, another index
    assert tool.main(["same-manifest", f"{host}/{REPO}:v1", digest]) == 1


# -- the base image --------------------------------------------------------------------------


def dockerfile(tmp_path: Path, tag: str, pinned: str) -> Path:
    path = tmp_path / "Dockerfile"
    path.write_text(
        f"ARG PYTHON_BASE_PINNED={pinned}\nARG PYTHON_BASE={tag}\nFROM ${{PYTHON_BASE}}\n"
    )
    return path


def test_the_repositorys_dockerfile_pins_its_tag_by_digest(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert tool.main(["base"]) == 0
    pinned = capsys.readouterr().out.strip()
    assert pinned.startswith("python:3.12-slim-bookworm@sha256:")
    text = (Path(tool.ROOT) / "Dockerfile").read_text()
    # every stage is built on the ARG, so the release's --build-arg reaches them all
    froms = [line for line in text.splitlines() if line.startswith("FROM ")]
    assert froms == ["FROM ${PYTHON_BASE} AS builder", "FROM ${PYTHON_BASE}"]


def test_a_pin_of_another_tag_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = dockerfile(tmp_path, "python:3.12-slim-bookworm", "python:3.13-slim@sha256:" + "a" * 64)
    assert tool.main(["base", "--dockerfile", str(path)]) == 1
    assert "PYTHON_BASE_PINNED must be python:3.12-slim-bookworm@sha256:" in capsys.readouterr().err


def test_verify_asks_the_registry_and_notices_a_moved_tag(
    registry: tuple[Registry, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reg, host = registry
    old = reg.add_index(["amd64", "arm64"])
    reg.add_index(["amd64", "arm64", "riscv64"], tag="3.12")  # the tag moved on
    path = dockerfile(tmp_path, f"{host}/{REPO}:3.12", f"{host}/{REPO}:3.12@{old}")
    assert tool.main(["base", "--dockerfile", str(path), "--verify"]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == f"{host}/{REPO}:3.12@{old}"
    assert "::notice title=base image moved::" in captured.err


def test_verify_refuses_a_digest_the_registry_does_not_have(
    registry: tuple[Registry, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reg, host = registry
    reg.add_index(["amd64", "arm64"], tag="3.12")
    path = dockerfile(tmp_path, f"{host}/{REPO}:3.12", f"{host}/{REPO}:3.12@sha256:" + "b" * 64)
    assert tool.main(["base", "--dockerfile", str(path), "--verify"]) == 1
    assert "HTTP 404" in capsys.readouterr().err


def test_update_moves_the_pin_to_the_tags_index(
    registry: tuple[Registry, str], tmp_path: Path
) -> None:
    reg, host = registry
    old = reg.add_index(["amd64", "arm64"])
    new = reg.add_index(["amd64", "arm64", "s390x"], tag="3.12")
    path = dockerfile(tmp_path, f"{host}/{REPO}:3.12", f"{host}/{REPO}:3.12@{old}")
    assert tool.main(["base", "--dockerfile", str(path), "--update"]) == 0
    assert f"ARG PYTHON_BASE_PINNED={host}/{REPO}:3.12@{new}\n" in path.read_text()


def test_digest_from_buildx_metadata(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    meta = tmp_path / "build.json"
    meta.write_text(json.dumps({"containerimage.digest": "sha256:" + "c" * 64}))
    assert tool.main(["digest", str(meta)]) == 0
    assert capsys.readouterr().out.strip() == "sha256:" + "c" * 64
    meta.write_text("{}")
    assert tool.main(["digest", str(meta)]) == 1


@pytest.mark.parametrize(
    ("text", "registry", "repository", "tag", "digest"),
    [
        ("python:3.12-slim", "registry-1.docker.io", "library/python", "3.12-slim", None),
        ("ghcr.io/a/b@sha256:" + "d" * 64, "ghcr.io", "a/b", None, "sha256:" + "d" * 64),
        ("127.0.0.1:5000/a/b:v1", "127.0.0.1:5000", "a/b", "v1", None),
    ],
)
def test_references_parse_as_docker_spells_them(
    text: str, registry: str, repository: str, tag: str | None, digest: str | None
) -> None:
    ref = tool.Ref.parse(text)
    assert (ref.registry, ref.repository, ref.tag, ref.digest) == (
        registry,
        repository,
        tag,
        digest,
    )
    assert str(ref) == text
    assert ref.base_url().startswith("http://" if registry.startswith("127.") else "https://")
