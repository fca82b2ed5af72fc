"""Measured-KL architecture tables in guard docstrings: parsing, flags for the CI architecture, measured values, cell edits. Pure."""
