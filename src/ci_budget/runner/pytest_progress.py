"""A tiny pytest plugin the runner loads into the tests' interpreter (as `ci_budget_progress`).

It appends `{"$report_type": "CiBudgetTestStart", "nodeid": ..., "start": ...}` to the file named by
$CI_BUDGET_PROGRESS_FILE when each test starts. pytest-reportlog writes nothing until a phase
ends, so without this a test hanging in setup (setUpClass launching a server) could not be named
after a timeout. Standalone on purpose: it must import nothing from ci_budget.
"""

import json
import os
import time

_FILE = None


def pytest_runtest_logstart(nodeid, location):
    global _FILE
    path = os.environ.get("CI_BUDGET_PROGRESS_FILE")
    if not path:
        return
    if _FILE is None:
        _FILE = open(path, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 - kept open
    _FILE.write(
        json.dumps({"$report_type": "CiBudgetTestStart", "nodeid": nodeid, "start": time.time()})
        + "\n"
    )
    _FILE.flush()
