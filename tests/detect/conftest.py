"""Detection tests: put this folder on sys.path for detect_fakes, and a fake nvidia-smi fixture."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from detect_fakes import write_fake_smi


@pytest.fixture
def fake_smi(tmp_path: Path) -> Callable[[list[dict[str, Any]]], dict[str, str]]:
    """Install a fake nvidia-smi first on PATH; returns the environment to use."""

    def make(rules: list[dict[str, Any]]) -> dict[str, str]:
        bin_dir = tmp_path / "bin"
        write_fake_smi(bin_dir, rules)
        env = dict(os.environ)
        env["PATH"] = str(bin_dir) + os.pathsep + env.get("PATH", "")
        env["GPUENV_DISABLE_NVML"] = "1"
        return env

    return make
