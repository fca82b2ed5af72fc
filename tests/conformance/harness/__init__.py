"""Conformance with sglang's own CI scripts: run them from a checkout, compare with ci-budget."""
