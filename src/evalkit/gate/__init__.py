"""Deciding, purely: the gate's model and procedure, input refusals, drift, compare, trends."""
