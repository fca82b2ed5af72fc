"""Application layer: one function per use case (scan, plan, run, report, diff, guard check, fill,
verify and suggest, history add, show, import and suggest), each from `Settings` and
its options to an exit status, writing every output through one `Sink`. Each use case's options
own their defaults and help (`app.settings`); the command line is built from them."""
