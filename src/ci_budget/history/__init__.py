"""Measured timing history: samples, per-file statistics (p50, p90), log-import bookkeeping; the
store on disk is `workspace.files`. Pure."""
