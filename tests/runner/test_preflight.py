import os
import stat
from pathlib import Path

import pytest

from ci_budget.config import Config
from ci_budget.runner.preflight import arch_from_name, cc_to_arch, detect_gpu, parse_nvidia_smi

ARCH = Config().gpu_arch_map()


@pytest.mark.parametrize(
    "cc, arch", [("9.0", "sm90"), ("10.0", "sm100"), ("12.0", "sm120"), ("8.6", "sm86")]
)
def test_cc_to_arch(cc, arch):
    assert cc_to_arch(cc) == arch


@pytest.mark.parametrize("bad", [None, "", "[N/A]", "9", "x.y"])
def test_cc_to_arch_rejects(bad):
    assert cc_to_arch(bad) is None


@pytest.mark.parametrize(
    "name, arch",
    [
        ("NVIDIA H200", "sm90"),
        ("NVIDIA H100 80GB HBM3", "sm90"),
        ("NVIDIA GH200 480GB", "sm90"),
        ("NVIDIA B200", "sm100"),
        ("NVIDIA GeForce RTX 5090", "sm120"),
        ("NVIDIA A100-SXM4-80GB", "sm80"),
        ("Tesla T4", None),
    ],
)
def test_arch_from_name(name, arch):
    assert arch_from_name(name, ARCH) == arch


def test_arch_from_name_prefers_longest_whole_word():
    assert arch_from_name("NVIDIA H20", {"H20": "a", "H200": "b"}) == "a"
    assert arch_from_name("NVIDIA H200", {"H20": "a", "H200": "b"}) == "b"


def test_parse_nvidia_smi_many_gpus():
    info = parse_nvidia_smi("NVIDIA H200, 9.0\n" * 8, ARCH)
    assert (info.name, info.compute_capability, info.arch, info.count) == (
        "NVIDIA H200",
        "9.0",
        "sm90",
        8,
    )


def test_parse_nvidia_smi_old_driver_uses_name():
    info = parse_nvidia_smi("NVIDIA H100 80GB HBM3\nNVIDIA H100 80GB HBM3\n", ARCH)
    assert (info.compute_capability, info.arch, info.count) == (None, "sm90", 2)
    assert parse_nvidia_smi("\n", ARCH) is None


def _script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def _env(bin_dir: Path) -> dict:
    return {**os.environ, "PATH": str(bin_dir)}


def test_detect_with_fake_nvidia_smi(tmp_path):
    _script(
        tmp_path / "nvidia-smi",
        'case "$1" in --query-gpu=name,compute_cap) printf "NVIDIA B200, 10.0\\nNVIDIA B200, 10.0\\n";;'
        " *) exit 9;; esac\n",
    )
    info = detect_gpu(ARCH, env=_env(tmp_path))
    assert (info.name, info.arch, info.count, info.source) == (
        "NVIDIA B200",
        "sm100",
        2,
        "nvidia-smi",
    )


def test_detect_old_driver_retries_with_name_only(tmp_path):
    _script(
        tmp_path / "nvidia-smi",
        'case "$1" in --query-gpu=name) echo "NVIDIA H200";;'
        " *) echo 'Field \"compute_cap\" is not a valid field to query.' >&2; exit 2;; esac\n",
    )
    info = detect_gpu(ARCH, env=_env(tmp_path))
    assert (info.name, info.compute_capability, info.arch) == ("NVIDIA H200", None, "sm90")


def test_detect_falls_back_to_torch_in_tests_python(tmp_path):
    # no nvidia-smi on PATH; the "tests' python" answers the torch probe
    python = _script(
        tmp_path / "python",
        'echo \'{"name": "NVIDIA GeForce RTX 5090", "cc": "12.0", "n": 1}\'\n',
    )
    info = detect_gpu(ARCH, python=str(python), env=_env(tmp_path))
    assert (info.arch, info.count, info.source) == ("sm120", 1, "torch")


def test_no_gpu_is_none(tmp_path):
    python = _script(tmp_path / "python", "exit 1\n")
    assert detect_gpu(ARCH, python=str(python), env=_env(tmp_path)) is None
    assert detect_gpu(ARCH, env=_env(tmp_path)) is None
