"""Machine descriptions that contradict themselves, and flags that would be silently ignored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def _resolve(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuenv", "resolve", "torch", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        env={**os.environ, "GPUENV_CACHE_DIR": str(cwd / "c")},
    )


@pytest.mark.parametrize(
    ("machine", "expected"),
    [
        ({"os": {"family": "linux"}, "arch": "x86_64", "platform": "win-64"}, "contradicts"),
        ({"os": {"family": "macos"}, "arch": "arm64", "platform": "linux-64"}, "contradicts"),
    ],
)
def test_a_machine_whose_platform_contradicts_its_os_is_refused(
    machine: dict[str, object], expected: str, tmp_path: Path
) -> None:
    path = tmp_path / "machine.json"
    path.write_text(json.dumps(machine))
    done = _resolve("--machine", str(path), cwd=tmp_path)
    assert done.returncode == 2 and expected in done.stderr and "Traceback" not in done.stderr


def test_a_consistent_machine_file_still_resolves(tmp_path: Path) -> None:
    path = tmp_path / "machine.json"
    path.write_text(
        json.dumps({"os": {"family": "linux"}, "arch": "aarch64", "platform": "linux-aarch64"})
    )
    done = _resolve("--machine", str(path), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["platform"] == "linux-aarch64"


def test_gpu_index_without_a_gpu_is_refused_not_ignored(tmp_path: Path) -> None:
    done = _resolve("--os", "linux", "--gpu-index", "0", cwd=tmp_path)
    assert done.returncode == 2 and "no NVIDIA GPU" in done.stderr
