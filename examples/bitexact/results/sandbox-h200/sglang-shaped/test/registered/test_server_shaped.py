"""An sglang-shaped GPU test for the sandbox's cost: a server process started through
torch.multiprocessing (spawn, as sglang's launchers do), a model file read from the runner's
Hugging Face cache, requests and CPU tensors over torch.multiprocessing queues (/dev/shm), and
the server's log written into the checkout."""

import os
import time
import unittest
from pathlib import Path

import torch
import torch.multiprocessing as mp


def register_cuda_ci(**kwargs):
    pass


register_cuda_ci(est_time=60, stage="base-b", runner_config="1-gpu-large")
MODEL = Path(os.environ["HOME"]) / ".cache" / "huggingface" / "hub" / "bench-model.bin"
N = 8192
REQUESTS, MATMULS = 30, 100


def server(requests, replies, log_path):
    with open(log_path, "a") as log:
        start = time.monotonic()
        values = MODEL.stat().st_size // 2
        weights = torch.from_file(str(MODEL), size=values, dtype=torch.bfloat16)
        blocks = weights[: 4 * N * N].view(4, N, N).cuda()
        log.write(f"loaded {MODEL} in {time.monotonic() - start:.2f}s\n")
        x = torch.ones(N, N, dtype=torch.bfloat16, device="cuda") / N
        while (n := requests.get()) is not None:
            for i in range(n):
                x = (x @ blocks[i % 4]).clamp_(-1, 1)
            torch.cuda.synchronize()
            replies.put(x[:4, :4].float().cpu())  # a CPU tensor through shared memory
            log.write(f"served {n} at {time.monotonic() - start:.2f}s\n")
            log.flush()


class TestServerShaped(unittest.TestCase):
    def test_requests(self):
        logs = Path(__file__).resolve().parents[2] / "logs"
        logs.mkdir(exist_ok=True)
        ctx = mp.get_context("spawn")
        requests, replies = ctx.Queue(), ctx.Queue()
        proc = ctx.Process(target=server, args=(requests, replies, logs / "server.log"))
        proc.start()
        for _ in range(REQUESTS):
            requests.put(MATMULS)
            self.assertEqual(tuple(replies.get(timeout=300).shape), (4, 4))
        requests.put(None)
        proc.join(120)
        self.assertEqual(proc.exitcode, 0)
        self.assertIn("served", (logs / "server.log").read_text())


if __name__ == "__main__":
    unittest.main()
