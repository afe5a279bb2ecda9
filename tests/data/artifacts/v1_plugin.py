"""The plugin metric the schema-1 fixture (v1.json) was scored with: never edit this file.

tests/test_artifact_versions.py checks that reading v1.json under today's evalkit still
recognises this metric's fingerprint (schema 1 hashed the source text; today's hashes
what the code does).
"""

from evalkit import GoldenCase, TargetResponse, register_metric


@register_metric("first_hit", higher_is_better=True)
def first_hit(response: TargetResponse, case: GoldenCase) -> float:
    return float(bool(response.ranked_ids) and response.ranked_ids[0] in case.relevant)
