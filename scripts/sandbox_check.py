"""Run a command in the tests' sandbox exactly as `ci-budget run` starts a test file, on this
runner: to see that it starts and that the GPUs work inside it.

    python scripts/sandbox_check.py [--python PY] [--expose PATH[:rw]] [-- COMMAND...]

Without a command: `nvidia-smi -L` and a CUDA tensor through torch in PY (default: this
interpreter). Exit status: the command's; 2 when the sandbox cannot start (its one-line reason).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from ci_budget.runner.command import scrubbed_env  # noqa: E402
from ci_budget.runner.sandbox import SandboxError, SandboxPolicy, open_sandbox  # noqa: E402

TORCH = (
    "import torch; n = torch.cuda.device_count(); "
    "print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'devices', n, "
    "'sum', torch.ones(8, device='cuda').sum().item() if n else None)"
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--expose", action="append", default=[], metavar="PATH[:rw]")
    parser.add_argument("--network", choices=["host", "none"], default="host")
    parser.add_argument("command", nargs="*")
    args = parser.parse_args()
    cwd = os.getcwd()
    env = scrubbed_env(os.environ)
    try:
        box = open_sandbox(SandboxPolicy("on", tuple(args.expose), args.network), args.python,
                           cwd, env, True)  # fmt: skip
    except SandboxError as exc:
        print(f"sandbox: {exc}", file=sys.stderr)
        return 2
    try:
        print(f"sandbox: {box.describe()}", flush=True)
        cmd = args.command or ["sh", "-c", f'nvidia-smi -L; "$0" -c "{TORCH}"', args.python]
        tree = box.start(cmd, Path(cwd), env, cwd, grace=5.0)
        out, _ = tree.proc.communicate()
        sys.stdout.write(out.decode(errors="replace"))
        tree.cleanup(5.0)
        return tree.returncode or 0
    finally:
        box.close()


if __name__ == "__main__":
    sys.exit(main())
