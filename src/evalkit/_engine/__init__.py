"""Running: a target over a golden set, repeated trials, checkpoints, shards, client load."""
