"""Application layer: one function per use case (scan, run, report, diff, plan, fill, suggest,
history), each from one `Settings` to an exit status, writing every output through one `Sink`."""
