"""Application layer: one function per use case (scan, run, report, diff, plan, fill, check,
suggest, history, import-logs), each from one `Settings` to an exit status, writing every output
through one `Sink`."""
