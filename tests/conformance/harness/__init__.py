"""Conformance with sglang's own CI scripts: run them from a checkout and compare with what
ci-budget decides there (`python -m tests.conformance.harness SGLANG_CHECKOUT`, from the
repository root; docs/dev/sglang-conformance.md). The project's proof, not part of the package."""
