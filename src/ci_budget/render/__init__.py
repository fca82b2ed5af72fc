"""Everything a person reads: terminal text, the run and budget-diff markdown, the sticky comment text, one escaping layer. Pure."""
