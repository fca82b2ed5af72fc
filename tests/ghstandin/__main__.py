"""`python -m tests.ghstandin --port N [--state seed.json] [--dump out.json]`: run standalone.

Prints the URL on the first line of stdout. On SIGTERM/SIGINT the final state (including the call
log and any invalid requests) is written to --dump; `GET /_standin/state` returns it at any time.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path

from .server import StandIn, default_state
from .state import State


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.ghstandin", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument(
        "--state", type=Path, help="seed JSON: repo, identities, issues, roles, users, comments"
    )
    parser.add_argument("--dump", type=Path, help="write the final state here on exit")
    args = parser.parse_args(argv)
    if args.state:
        seed = json.loads(args.state.read_text(encoding="utf-8"))
        base = default_state(seed.get("repo", State.repo))
        state = State.from_json(seed)
        state.identities = {**base.identities, **state.identities}
        state.roles = {**base.roles, **state.roles}
    else:
        state = default_state()
    standin = StandIn(state, args.host, args.port).start()
    print(standin.url, flush=True)
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    done.wait()
    standin.stop()
    if args.dump:
        args.dump.write_text(json.dumps(standin.state.to_json(), indent=2), encoding="utf-8")
    return 1 if standin.invalid else 0


if __name__ == "__main__":
    sys.exit(main())
