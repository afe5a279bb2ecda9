"""``evalkit history`` and ``evalkit pin``: a config's promotions, their trend, its reference."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit._app import provenance
from evalkit.errors import ConfigError

if TYPE_CHECKING:
    from evalkit._spec.config import LoadedConfig
    from evalkit._store.history import History
    from evalkit._store.protocol import BaselineFetch, BaselineStore, GitHubAccess, PinResult
    from evalkit.gate.trend import MetricTrend

#: How many promotions ``evalkit history`` shows by default (the newest).
DEFAULT_LIMIT = 20


def github_access_from_env(env: Mapping[str, str]) -> GitHubAccess | None:
    """Read-only GitHub access for the CLI, when ``GITHUB_TOKEN`` and ``GITHUB_REPOSITORY``
    are set (as in any Actions step; ``GITHUB_API_URL`` for GHES): then ``evalkit history``
    lists the artifact and branch stores' promotions too."""
    from evalkit._store.protocol import GitHubAccess
    from evalkit.github.client import DEFAULT_RETRY, call_github, default_github_factory

    token = env.get("GITHUB_TOKEN") or env.get("GH_TOKEN") or ""
    name = env.get("GITHUB_REPOSITORY") or ""
    if not token or "/" not in name:
        return None
    github = default_github_factory(env.get("GITHUB_API_URL") or "https://api.github.com", token)

    @functools.cache  # one request, however often the stores ask
    def repo_facts() -> tuple[int, str]:
        raw = call_github(
            f"get repository {name}", lambda: github.get_repo(name).raw_data, retry=DEFAULT_RETRY
        )
        return int(raw["id"]), str(raw["default_branch"])

    return GitHubAccess(
        repo=lambda: github.get_repo(name),
        repo_facts=repo_facts,
        token=token,
        retry=DEFAULT_RETRY,
    )


def checked_metrics(config: LoadedConfig) -> list[str]:
    """The metrics the checks file compares (vs_baseline or vs_reference), in file order.

    When no check compares runs, every metric of the config's checks.
    """
    from evalkit._spec.checks import load_checks_file

    checks = load_checks_file(config.resolve(config.model.checks)).checks
    compared = [
        c.metric
        for c in checks
        if getattr(c, "vs_baseline", None) or getattr(c, "vs_reference", None)
    ]
    return list(dict.fromkeys(compared or [c.metric for c in checks]))


@dataclass(frozen=True)
class HistoryView:
    """What ``evalkit history`` prints."""

    config_name: str
    store: str  # the store's describe()
    history: History
    reference: BaselineFetch
    trends: Sequence[MetricTrend]


def history_view(
    config: LoadedConfig,
    *,
    metrics: Sequence[str] | None = None,
    candidate: Path | None = None,
    limit: int = DEFAULT_LIMIT,
    n_resamples: int | None = None,
    store: BaselineStore | None = None,
    work: Path | None = None,
    access: GitHubAccess | None = None,
) -> HistoryView:
    """The config's promotions (newest ``limit``), its reference, and each metric's trend."""
    from evalkit._app.store_opening import open_config_store
    from evalkit._store.protocol import FetchRequest

    store = store or open_config_store(config, access)
    work = work or config.fetched_dir
    wanted = list(metrics) if metrics else checked_metrics(config)
    history, trends = promotion_trends(
        config, store, work, wanted, candidate=candidate, limit=limit, n_resamples=n_resamples
    )
    reference = store.fetch_reference(FetchRequest(config.name, work))
    return HistoryView(config.name, store.describe(), history, reference, trends)


def promotion_trends(
    config: LoadedConfig,
    store: BaselineStore,
    work: Path,
    metrics: Sequence[str],
    *,
    candidate: Path | None = None,
    limit: int = DEFAULT_LIMIT,
    n_resamples: int | None = None,
) -> tuple[History, list[MetricTrend]]:
    """The store's promotions (newest ``limit``) and the trend of each of ``metrics``."""
    from evalkit._store.protocol import HistoryRequest
    from evalkit.gate.trend import metric_trends

    history = store.history(HistoryRequest(config.name, work, limit=limit))
    shown = history.entries[-limit:] if limit else history.entries
    if len(shown) < len(history.entries):
        older = len(history.entries) - len(shown)
        detail = f"{history.detail}; the newest {len(shown)} shown ({older} older: --limit)"
        history = replace(history, entries=tuple(shown), detail=detail)
    trends = (
        metric_trends(
            history.entries,
            list(metrics),
            candidate=candidate,
            n_resamples=n_resamples or config.model.n_resamples,
            seed=config.model.seed,
        )
        if history.entries or candidate is not None
        else []
    )
    return history, trends


def render_history(view: HistoryView) -> str:
    from evalkit.gate.trend import render_trend

    history = view.history
    lines = [f"history of config {view.config_name!r} ({view.store}): {history.detail}"]
    if history.entries:
        lines.append(f"  {'#':>3}  {'promoted (UTC)':<20} {'commit':<12} config fingerprint")
        for i, entry in enumerate(history.entries, 1):
            when = (
                entry.promoted_at.strftime("%Y-%m-%d %H:%M:%S") if entry.promoted_at else "unknown"
            )
            pinned = view.reference.found and entry.sha and entry.sha == view.reference.sha
            row = (
                f"  {i:>3}  {when:<20} {(entry.sha or 'unknown')[:12]:<12} "
                f"{(entry.config_fingerprint or '-')[:16]:<18}{'  <- reference' if pinned else ''}"
            )
            lines.append(row.rstrip())
    else:
        lines.append("  no promotion kept yet")
    ref = view.reference
    lines.append("")
    lines.append(
        f"reference: {ref.detail}" if ref.found else f"reference: {ref.status}: {ref.detail}"
    )
    for trend in view.trends:
        lines.append("")
        lines.append(render_trend(trend))
    return "\n".join(lines)


def history_json(view: HistoryView) -> str:
    """``evalkit history --json``: the promotions, the reference and the trends."""
    import json

    from evalkit.gate.trend import trends_as_dicts

    ref = view.reference
    doc = {
        "config": view.config_name,
        "store": view.store,
        "detail": view.history.detail,
        "lost": view.history.lost,
        "promotions": [
            {
                "label": e.label,
                "sha": e.sha,
                "promoted_at": e.promoted_at.isoformat() if e.promoted_at else None,
                "config_fingerprint": e.config_fingerprint,
            }
            for e in view.history.entries
        ],
        "reference": {"status": ref.status, "sha": ref.sha, "detail": ref.detail},
        "trends": trends_as_dicts(view.trends),
    }
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


def pin_reference(config: LoadedConfig, text: str) -> PinResult:
    """Pin the promotion ``text`` names as the config's reference (the local file store).

    The GitHub stores are pinned by the Action (``mode: pin``), which can write to them.
    """
    from evalkit._app.store_opening import open_config_store
    from evalkit._store.file_store import FileStore
    from evalkit._store.history import parse_pin
    from evalkit._store.protocol import PinRequest

    spec = parse_pin(text, where="evalkit pin")
    store = open_config_store(config)
    if not isinstance(store, FileStore):
        raise ConfigError(
            f"{config.path}: baseline.store is {store.kind!r} ({store.describe()}): the "
            "GitHub Action pins that store's reference (mode: pin, with the pin input); "
            "`evalkit pin` pins the local file store's (baseline: {path: …})"
        )
    work = config.fetched_dir
    return store.pin(
        PinRequest(
            config.name, spec, work, work, resolve_tag=provenance.git_tag_resolver(config.root)
        )
    )
