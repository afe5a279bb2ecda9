"""The use cases: prepare, run, gate, promote, history, reference lookup, show, git provenance.

The only layer where the loaded config travels; below it, plain values."""
