"""The hash every fingerprint is: SHA-256 of a canonical JSON text."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def sha256_json(payload: Any, *, compact: bool = True) -> str:
    """SHA-256 (hex) of ``payload`` as JSON with sorted keys (``compact``: without spaces)."""
    separators = (",", ":") if compact else None
    text = json.dumps(payload, sort_keys=True, separators=separators, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
