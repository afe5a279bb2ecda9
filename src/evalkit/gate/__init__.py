"""Deciding, purely: the gate's model and procedure, input refusals, drift, compare, trends.

Nothing here imports a store: the use cases turn a store's answer into gate inputs.
Users read the gate's names from the package root (``from evalkit import evaluate_gate``).
"""
