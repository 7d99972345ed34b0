"""What the benchmarks share: a clean environment (no index settings of this machine), timing."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Sequence

GPUENV = [sys.executable, "-m", "gpuenv"]
# This machine's own mirrors and wheelhouse would make gpuenv, uv and pip fetch different files.
INDEX_VARS = (
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_FIND_LINKS",
    "PIP_CONSTRAINT",
    "UV_DEFAULT_INDEX",
    "UV_INDEX_URL",
    "UV_INDEX",
    "UV_EXTRA_INDEX_URL",
    "UV_FIND_LINKS",
)


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in INDEX_VARS}
    env["PIP_CONFIG_FILE"] = os.devnull
    return env


def timed(cmd: Sequence[str], env: dict[str, str]) -> float:
    """Seconds the command took; exits the benchmark with its error if it failed."""
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-2000:]}")
    return elapsed
