"""macOS facts: version, Apple silicon, and whether this process runs under Rosetta 2."""

from __future__ import annotations

import platform

from gpuenv.detect._run import ProbeError, run
from gpuenv.machine import OSInfo


def os_info() -> OSInfo:
    version = platform.mac_ver()[0]
    return OSInfo(family="macos", name=f"macOS {version}".strip(), version=version)


def rosetta_translated(timeout: float) -> bool:
    """True when this (x86_64) process is translated by Rosetta 2 on Apple silicon."""
    try:
        res = run(["sysctl", "-n", "sysctl.proc_translated"], timeout=timeout)
    except ProbeError:
        return False
    return res.returncode == 0 and res.stdout.strip() == "1"
