"""The statistics engine behind :mod:`evalkit.stats.significance` (pure numpy, no I/O)."""
