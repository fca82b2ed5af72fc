"""Code only the tests use."""
