"""Every file format evalkit writes, by name and version, in one place."""

from __future__ import annotations

from typing import Final

# The run artefact (artifact.py): `schema_version` is its first key.
ARTIFACT_SCHEMA_VERSION: Final = 3
# The gate report (`evalkit gate --json`, report/json_report.py).
GATE_REPORT_KIND: Final = "evalkit.gate-report"
GATE_REPORT_SCHEMA_VERSION: Final = 1
# A run's checkpoint (checkpoint.py): the header line of the JSONL file.
CHECKPOINT_FORMAT: Final = "evalkit-checkpoint"
CHECKPOINT_VERSION: Final = 1
# The LLM judge's grade cache (metrics/judge_cache.py).
JUDGE_CACHE_FORMAT: Final = "evalkit-judge-cache"
JUDGE_CACHE_VERSION: Final = 1
# A baseline store's index of promotions (history.py): `evalkit_history`.
HISTORY_INDEX_VERSION: Final = 1
