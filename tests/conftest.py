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


@pytest.fixture(autouse=True)
def _not_in_a_job(monkeypatch):
    """The suite behaves the same in a GitHub Actions job as on a laptop: `run` picks its
    sandbox from GITHUB_ACTIONS (on in a job), so a test that wants a job says so itself."""
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
