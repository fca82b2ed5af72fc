"""Edge: the checkout on disk and in git, test file discovery and the scan's workers and cache, results files, the history store."""
