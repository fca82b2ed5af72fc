"""Measured time against est_time: statuses, suite totals, suggestions, and the est_time diff a PR makes against its base. Pure."""
