"""Per-file and per-class timings from pytest's reports and the results format. Pure."""
