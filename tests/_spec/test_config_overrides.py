"""LoadedConfig.with_overrides and the baseline defaults: decided once, merged without mutation."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit._app.store_opening import open_config_store
from evalkit._spec.config import BaselineConfig, load_config
from evalkit.errors import ConfigError
from evalkit.github.stores import STORES

BASE = "goldens: g.jsonl\nchecks: c.yaml\nmetrics: [recall@10]\ntarget: {python: 'm:f'}\n"


def config(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "evalkit.yaml"
    path.write_text(BASE + extra)
    return path


@pytest.mark.parametrize(
    ("section", "kind"),
    [
        ({}, "artifact"),
        ({"path": "b.json"}, "file"),
        ({"store": "branch"}, "branch"),
        ({"store": "none"}, "none"),
        ({"store": "artifact", "path": "ignored.json"}, "artifact"),
    ],
)
def test_config_baseline_store_default_is_decided_in_one_place(
    section: dict[str, str], kind: str
) -> None:
    assert BaselineConfig(**section).kind == kind  # type: ignore[arg-type]


def test_config_every_store_name_has_one_class() -> None:
    assert set(STORES) == {"artifact", "branch", "file", "none"}


def test_config_with_overrides_returns_a_new_config_and_keeps_the_old(tmp_path: Path) -> None:
    loaded = load_config(config(tmp_path, "name: search\nbaseline: {store: branch, branch: bl}\n"))
    before = loaded.model.model_dump()
    merged = loaded.with_overrides(
        name="other", require_baseline=True, baseline_store="artifact", baseline_name="nightly"
    )
    assert loaded.model.model_dump() == before  # not mutated
    assert (merged.name, merged.model.require_baseline) == ("other", True)
    assert (merged.baseline.kind, merged.baseline.name) == ("artifact", "nightly")
    assert merged.baseline.branch == "bl"  # not overridden: the file's
    assert merged.path == loaded.path
    assert loaded.with_overrides().model == loaded.model  # nothing given: the same settings


def test_config_with_overrides_is_validated_like_the_file(tmp_path: Path) -> None:
    loaded = load_config(config(tmp_path))
    with pytest.raises(ConfigError, match=r"store 'file' needs a 'path'.*overrides"):
        loaded.with_overrides(baseline_store="file")


def test_config_open_store_resolves_file_path_from_config_folder(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    path = tmp_path / "sub" / "evalkit.yaml"
    path.write_text(BASE + "baseline: {path: ../b.json}\n")
    store = open_config_store(load_config(path))
    assert store.kind == "file"
    assert store.describe() == f"file {tmp_path / 'sub' / '../b.json'}"
