"""Measured timing history: samples, per-file statistics (p50, p90), the weights shards are planned on. Pure."""
