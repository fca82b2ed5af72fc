"""A local, stateful stand-in for the GitHub REST API, for tests. See `server.StandIn`."""

from .server import (
    BOT_ID,
    BOT_LOGIN,
    INSTALLATION_TOKEN,
    PAT_TOKEN,
    READONLY_TOKEN,
    StandIn,
    default_state,
)
from .spec import validate
from .state import Comment, Identity, Issue, State

__all__ = [
    "BOT_ID",
    "BOT_LOGIN",
    "INSTALLATION_TOKEN",
    "PAT_TOKEN",
    "READONLY_TOKEN",
    "Comment",
    "Identity",
    "Issue",
    "StandIn",
    "State",
    "default_state",
    "validate",
]
