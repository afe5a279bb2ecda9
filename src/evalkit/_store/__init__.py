"""Keeping: the baseline-store protocol and its value types, the file store, history, pins."""
