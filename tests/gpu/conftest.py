"""GPU tests: `gpu`-marked tests run only where an NVIDIA GPU answers; helpers on sys.path."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "detect"))


def nvidia_gpu_present() -> bool:
    """nvidia-smi lists at least one GPU (NVML behind it works)."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return False
    try:
        res = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return res.returncode == 0 and "GPU 0" in res.stdout


HAS_GPU = nvidia_gpu_present()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if HAS_GPU:
        return
    skip = pytest.mark.skip(reason="no NVIDIA GPU here (nvidia-smi -L lists none)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
