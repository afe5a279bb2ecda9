"""The names a comparison can be asked for, declared once (no numpy: checks import them)."""

from __future__ import annotations

from typing import Final, Literal

Method = Literal["bootstrap", "permutation", "t"]
METHODS: Final[tuple[Method, ...]] = ("bootstrap", "permutation", "t")
Correction = Literal["none", "holm", "maxt"]
CORRECTIONS: Final[tuple[Correction, ...]] = ("none", "holm", "maxt")
