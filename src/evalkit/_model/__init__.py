"""The nouns: golden cases, per-case results, the metric registry, metric identity, file formats."""
