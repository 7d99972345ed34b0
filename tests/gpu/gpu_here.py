"""Is an NVIDIA GPU here? nvidia-smi lists at least one (NVML behind it works)."""

from __future__ import annotations

import shutil
import subprocess


def nvidia_gpu_present() -> bool:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return False
    try:
        res = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return res.returncode == 0 and "GPU 0" in res.stdout


HAS_GPU = nvidia_gpu_present()
