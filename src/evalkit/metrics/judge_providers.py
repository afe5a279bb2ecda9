"""Which judge class serves which provider, and building one from evalkit.yaml's ``judge:``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from evalkit.metrics.judge import LLMJudge
from evalkit.metrics.judge_base import JudgeBase

Provider = Literal["anthropic", "openai"]


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
) -> JudgeBase:
    """The judge for ``provider``; ``wire`` holds :data:`evalkit._spec.config.WIRE_SETTINGS`."""
    judge: type[JudgeBase] = LLMJudge  # the config refused OPENAI_ONLY settings for it
    if provider == "openai":
        from evalkit.metrics.openai_judge import OpenAIJudge

        judge = OpenAIJudge
    given = {k: v for k, v in wire.items() if v is not None}
    return judge(rubric, model, scale, cache_path, cache_only=cache_only, prices=prices, **given)
