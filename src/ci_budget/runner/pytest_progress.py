"""A tiny pytest plugin the runner loads into the tests' interpreter (as `ci_budget_progress`).

It appends `{"$report_type": "CiBudgetTestStart", "nodeid": ..., "start": ...}` to the file named by
$CI_BUDGET_PROGRESS_FILE when each test starts. pytest-reportlog writes nothing until a phase
ends, so without this a test hanging in setup (setUpClass launching a server) could not be named
after a timeout. Standalone on purpose: it must import nothing from ci_budget.
"""

import json
import os
import time

import pytest

_FILE = None
_CAPTURE_OFF = False


@pytest.hookimpl(trylast=True)  # after pytest-reportlog's own configure registered its plugin
def pytest_configure(config):
    # With capture off (`-s`) a test's prints reach only the file's output: mark where each test
    # starts there, so ci-budget can tell whose `avg_kl_div=...` a line is.
    global _CAPTURE_OFF
    _CAPTURE_OFF = getattr(config.option, "capture", "fd") == "no"
    _quiet_report_log(config.pluginmanager)


def _quiet_report_log(manager):
    """pytest-reportlog ends every file's output with "generated report log file: PATH", a
    path of ci-budget's, not the tests': its plugin is registered again without that one hook
    (it has no option for it). It still writes every record."""
    for plugin in manager.get_plugins():
        if type(plugin).__name__ == "ReportLogPlugin" and callable(
            getattr(plugin, "pytest_terminal_summary", None)
        ):
            manager.unregister(plugin)
            plugin.pytest_terminal_summary = None  # not a routine: pluggy skips it
            manager.register(plugin)


def pytest_runtest_logstart(nodeid, location):
    global _FILE
    if _CAPTURE_OFF:
        print(f"\n[ci-budget test] {nodeid}", flush=True)
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
