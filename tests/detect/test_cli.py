"""`gpuenv detect` end to end: through click, and as `python -m gpuenv detect --json`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from detect_fakes import CURRENT, GARBAGE, HANGS, NO_DRIVER, R470, TWO_GPUS

from gpuenv.commands.detect import detect
from gpuenv.machine import Machine

INSTALLER = Path(__file__).resolve().parents[2] / "installer"


def _gpuenv_detect(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    env = {**env, "PYTHONPATH": str(INSTALLER)}
    if (INSTALLER / "gpuenv" / "__main__.py").exists():
        argv = [sys.executable, "-m", "gpuenv", "detect", *args]
    else:  # before cli.py lands: the command on its own
        code = "from gpuenv.commands.detect import detect; detect()"
        argv = [sys.executable, "-c", code, *args]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)


def _machine(res: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    data: dict[str, Any] = json.loads(res.stdout)
    Machine.from_json(data)  # what `gpuenv resolve --machine FILE` will do
    return data


def test_this_machine_json() -> None:
    env = dict(os.environ)
    start = time.monotonic()
    data = _machine(_gpuenv_detect(env, "--json"))
    elapsed = time.monotonic() - start
    assert data["os"]["family"] == "linux"
    assert (data["arch"], data["platform"]) == ("x86_64", "linux-64")
    assert data["glibc"] and data["glibc"].startswith("2.")
    assert data["pythons"] and data["pythons"][0]["source"] == "running"
    assert data["driver"] is None and data["gpus"] == []
    assert "no NVIDIA GPU found" in data["notes"]
    assert elapsed < 5  # includes interpreter start; detect itself is well under a second


def test_current_driver(fake_smi) -> None:  # type: ignore[no-untyped-def]
    data = _machine(_gpuenv_detect(fake_smi(CURRENT), "--json"))
    assert data["driver"] == {"version": "566.36", "cuda": "12.7"}
    (g,) = data["gpus"]
    assert (g["name"], g["compute_capability"], g["pci_id"], g["memory_mib"]) == (
        "NVIDIA GeForce RTX 4070 Laptop GPU",
        "8.9",
        "10de:2860",
        8188,
    )
    assert g["source"] == "nvidia-smi"


def test_r470_driver(fake_smi) -> None:  # type: ignore[no-untyped-def]
    data = _machine(_gpuenv_detect(fake_smi(R470), "--json"))
    assert data["driver"] == {"version": "450.66", "cuda": "11.0"}
    (g,) = data["gpus"]
    assert g["name"] == "GeForce GTX 780"
    # the knowledge base (recipes/) may or may not know this GPU yet; either way it is said
    if g["compute_capability"] is None:
        assert any("compute capability of GPU 0" in n for n in data["notes"])
    else:
        assert g["compute_capability"] == "3.5"
        assert "knowledge base" in g["source"]


def test_two_gpus(fake_smi) -> None:  # type: ignore[no-untyped-def]
    data = _machine(_gpuenv_detect(fake_smi(TWO_GPUS), "--json"))
    assert [(g["index"], g["compute_capability"]) for g in data["gpus"]] == [(0, "7.0"), (1, "8.9")]
    assert data["driver"] == {"version": "570.86.15", "cuda": "12.2"}


@pytest.mark.parametrize(
    ("rules", "reason"),
    [
        (NO_DRIVER, "couldn't communicate with the NVIDIA driver"),
        (GARBAGE, "unexpected line"),
        (HANGS, "did not answer within 1s"),
    ],
)
def test_broken_driver_gives_clean_no_gpu_result(fake_smi, rules, reason: str) -> None:  # type: ignore[no-untyped-def]
    start = time.monotonic()
    data = _machine(_gpuenv_detect(fake_smi(rules), "--json", "--timeout", "1"))
    assert time.monotonic() - start < 10
    assert data["driver"] is None and data["gpus"] == []
    assert any(reason in n for n in data["notes"])
    assert "no NVIDIA GPU found" in data["notes"]


def test_summary_via_click() -> None:
    res = CliRunner().invoke(detect, [])
    assert res.exit_code == 0, res.output
    assert "Driver:    no NVIDIA driver" in res.output
    assert "Platform:  linux-64" in res.output and "glibc:" in res.output
    res = CliRunner().invoke(detect, ["--json"])
    assert res.exit_code == 0
    assert Machine.loads(res.output).platform == "linux-64"


def test_summary_with_gpus(fake_smi, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    for k, v in fake_smi(TWO_GPUS).items():
        monkeypatch.setenv(k, v)
    res = CliRunner().invoke(detect, [])
    assert res.exit_code == 0, res.output
    assert "NVIDIA 570.86.15 (supports CUDA up to 12.2)" in res.output
    assert "[1] NVIDIA RTX 5880 Ada Generation: compute capability 8.9" in res.output
