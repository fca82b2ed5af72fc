"""Edge: the checkout on disk and in git: the project root and config file, test file discovery
and the scan's workers, results files, the history store, sources edited in place."""
