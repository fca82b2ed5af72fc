"""Edge: GitHub's REST API (PyGithub), the Actions runner's event file, outputs, step summary and workflow commands."""
