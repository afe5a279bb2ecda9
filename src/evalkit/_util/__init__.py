"""Utilities every layer may use: atomic writes, bounded reads, YAML, paths, signals, text."""
