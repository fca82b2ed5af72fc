"""Edge: runs registered test files in their own process sessions with per-file timeouts and records their timings."""
