"""Which judge class serves which provider, and building one from evalkit.yaml's ``judge:``.

``provider: anthropic`` (the default) is :class:`~evalkit.metrics.judge.LLMJudge`
over the Messages API; ``provider: openai`` is
:class:`~evalkit.metrics.openai_judge.OpenAIJudge` over any OpenAI-compatible
Chat Completions server (``base_url``).  The wire-only settings (``base_url``,
``api_key_env``, ``api_version``, ``rate_limit_wait_s``) apply to ``openai``
alone; the config refuses them on ``anthropic`` rather than ignore them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from evalkit.metrics.judge import LLMJudge

__all__ = ["PROVIDERS", "WIRE_SETTINGS", "Provider", "build_judge"]

Provider = Literal["anthropic", "openai"]
PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai")
# Settings that only the OpenAI-compatible wire understands.
WIRE_SETTINGS = ("base_url", "api_key_env", "api_version", "rate_limit_wait_s")


def build_judge(
    provider: Provider,
    *,
    rubric: str,
    model: str,
    scale: int,
    cache_path: Path | None,
    cache_only: bool,
    prices: Mapping[str, float] | None,
    wire: Mapping[str, Any],
) -> LLMJudge:
    """The judge for ``provider``; ``wire`` holds the set :data:`WIRE_SETTINGS` (openai only)."""
    common: dict[str, Any] = {
        "rubric": rubric,
        "model": model,
        "scale": scale,
        "cache_path": cache_path,
        "cache_only": cache_only,
        "prices": prices,
    }
    if provider == "anthropic":
        return LLMJudge(**common)
    from evalkit.metrics.openai_judge import OpenAIJudge

    given = {k: v for k, v in wire.items() if v is not None}
    return OpenAIJudge(**common, **given)
