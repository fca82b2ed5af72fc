"""Shared fixtures. `github_standin`: a local GitHub (tests/ghstandin) that fails the test on any
request GitHub's OpenAPI description would reject."""

from __future__ import annotations

import pytest
from ghstandin import StandIn


@pytest.fixture
def github_standin():
    with StandIn() as standin:
        yield standin
    assert not standin.invalid, "requests GitHub would reject:\n" + "\n".join(standin.invalid)
