"""Launch the example's model server and wait for it to report ready. It never does.

This file hangs on purpose, to show what ci-budget does with a hang: the server detaches into
its own session (as real servers started with `setsid` do) and sits in a warm-up that never
ends, while the test waits for its ready file. ci-budget's per-file timeout (15 s in this
example's ci-budget.toml) stops it first: the report says `timeout`, names the test that was
running, and no process of the file survives. Under plain pytest the wait gives up after
20 s and the test fails.
"""

import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

try:
    from sglang.test.ci.ci_register import register_cuda_ci
except ImportError:

    def register_cuda_ci(*args, **kwargs):
        return None


register_cuda_ci(est_time=5, stage="base-c", runner_config="1-gpu-large")

# The server: leave the test's session, then "warm up" forever without writing its ready file.
SERVER = "import os, time; os.setsid(); time.sleep(3600)"
READY_WAIT = 20.0


class TestServerLaunch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.ready = Path(cls.tmp.name) / "ready"
        cls.server = subprocess.Popen([sys.executable, "-c", SERVER, str(cls.ready)])

    @classmethod
    def tearDownClass(cls):
        cls.server.kill()
        cls.server.wait()
        cls.tmp.cleanup()

    def test_server_becomes_ready(self):
        deadline = time.monotonic() + READY_WAIT
        while not self.ready.exists():
            self.assertLess(time.monotonic(), deadline, f"server not ready after {READY_WAIT:.0f}s")
            time.sleep(0.2)


if __name__ == "__main__":
    unittest.main()
