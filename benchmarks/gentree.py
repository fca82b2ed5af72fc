"""Deterministic sglang-shaped test trees for the registry benchmark and its equality test."""

from __future__ import annotations

import random
from pathlib import Path

FORMS = [
    'register_cuda_ci(est_time={est}, stage="{stage}", runner_config="{runner}")\n',
    'register_cuda_ci({est}, "{stage}-test-{runner}")\n',
    'register_cuda_ci(\n    est_time={est},  # measured on H200\n    stage="{stage}",\n'
    '    runner_config="{runner}",\n)\n',
    'register_cuda_ci({est}, "nightly-{runner}", True)\n',
    'register_cuda_ci(est_time={est}, stage="{stage}", runner_config="{runner}", '
    'disabled="flaky (see tracker)")\n',
    'register_amd_ci(est_time={est}, suite="stage-a-test-1-gpu-amd")\n'
    'register_cuda_ci(est_time={est}, stage="{stage}", runner_config="{runner}")\n',
    'register_cpu_ci({est}, "base-a-test-cpu")\n',
    'register_cuda_ci(est_time={est}, stage="{stage}", runner_config="{runner}", '
    'in_process_group="kernels")\n',
]
BROKEN = [
    "register_cuda_ci(est_time=FLAG, suite='x')\n",
    "register_cuda_ci(est_time={est})\n",
    "register_cuda_ci(est_time=True, suite='x')\n",
]
TABLE = '''"""Bit-exact guard {n}.

Measured avg_kl_div:

                                         fix reverted                 fix
                                      SM100 (B200) SM90 (H200)   in place
  #{fix}   test_logprobs_match            5.58e-07         0.0        0.0
           test_prefill_cache_hit         6.22e-06    4.40e-06        0.0
           lazy test_prefill_cache_hit    5.56e-06         n/a        0.0

CI runs `1-gpu-large`, which is SM90.
"""
'''
STAGES = ["base-a", "base-b", "base-c", "stage-b", "stage-c"]
RUNNERS = ["1-gpu-large", "1-gpu-small", "2-gpu-large", "4-gpu-b200", "8-gpu-h200"]


def _imports(rng: random.Random) -> str:
    lines = ["import os", "import unittest", "from types import SimpleNamespace", ""]
    for i in range(rng.randint(5, 25)):
        lines.append(f"from sglang.srt.module_{i} import thing_{i}, other_{i}")
    lines += [
        "from sglang.test.test_utils import CustomTestCase, popen_launch_server",
        "",
        "try:",
        "    from sglang.test.ci.ci_register import register_cuda_ci, register_amd_ci, register_cpu_ci",
        "except ImportError:  # running outside sglang",
        "",
        "    def register_cuda_ci(*args, **kwargs):",
        "        return None",
        "",
    ]
    return "\n".join(lines) + "\n"


def _class(rng: random.Random, c: int) -> str:
    out = [
        f"\n\nclass TestCase{c}(CustomTestCase):",
        f'    """Checks variant {c} of the server."""',
        "",
        "    @classmethod",
        "    def setUpClass(cls):",
        "        cls.model = os.environ.get('MODEL', 'default')",
        "        cls.process = popen_launch_server(cls.model, 'http://127.0.0.1:2157', "
        "timeout=600, other_args=['--tp', '2', '--page-size', str(64)])",
        "",
        "    @classmethod",
        "    def tearDownClass(cls):",
        "        cls.process.terminate()",
        "",
    ]
    for t in range(rng.randint(3, 9)):
        out += [
            f"    def test_case_{t}(self):",
            "        res = run_eval(SimpleNamespace(base_url=self.base_url, model=self.model, "
            f"eval_name='mmlu', num_examples={rng.randint(8, 256)}, num_threads=32))",
            f"        self.assertGreater(res['score'], 0.{rng.randint(10, 99)})",
            "        for i in range(10):",
            "            value = compute(i, scale=i * 2) + other(i)",
            "            self.assertIsNotNone(value)",
            "",
        ]
    return "\n".join(out) + "\n"


def make_file(rng: random.Random, n: int) -> str:
    target = rng.randint(5_000, 30_000)
    parts = []
    kind = rng.random()
    if rng.random() < 0.05:
        parts.append(TABLE.format(n=n, fix=30000 + n))
    else:
        parts.append(f'"""Tests for feature {n}."""\n\n')
    parts.append(_imports(rng))
    if kind < 0.10:
        pass  # no registration
    elif kind < 0.12:
        parts.append(rng.choice(BROKEN).format(est=rng.randint(5, 2000)))
    else:
        form = rng.choice(FORMS)
        parts.append(
            form.format(
                est=rng.randint(5, 2000), stage=rng.choice(STAGES), runner=rng.choice(RUNNERS)
            )
        )
    if rng.random() < 0.02:
        parts.append("\nif os.environ.get('EXTRA'):\n    register_cuda_ci(5, 'extra-suite')\n")
    size = sum(len(p) for p in parts)
    c = 0
    while size < target:
        block = _class(rng, c)
        parts.append(block)
        size += len(block)
        c += 1
    if rng.random() < 0.97:
        parts.append('\n\nif __name__ == "__main__":\n    unittest.main()\n')
    return "".join(parts)


def make_tree(root: Path, files: int, seed: int = 20261129) -> list[str]:
    """Write `files` test files under root/test/registered and return their repo-relative paths."""
    rng = random.Random(seed)
    rels = []
    for n in range(files):
        rel = f"test/registered/area_{n % 40:02d}/sub_{n % 7}/test_feature_{n:05d}.py"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(make_file(rng, n))
        rels.append(rel)
    return sorted(rels)
