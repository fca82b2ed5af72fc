"""Repository profiles: settings read from a repository's own CI definitions."""
