"""Detect the Machine this process runs on.

GPU probes are tried in order, each with a timeout; a probe that fails leaves a note and the next
one is tried: NVML, then nvidia-smi, then the OS's own view (/proc and /sys on Linux, CIM on
Windows), so a machine whose driver tools are broken is still described.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Optional

from gpuenv.detect import linux, macos, nvidia_smi, nvml, pythons, tegra, windows
from gpuenv.detect._facts import (
    CcLookup,
    GpuFacts,
    fill_compute_capability,
    knowledge_base_lookup,
)
from gpuenv.detect._run import ProbeError
from gpuenv.machine import (
    Driver,
    Machine,
    MachineError,
    OSInfo,
    check_driver_text,
    conda_platform,
    normalize_arch,
)

__all__ = ["DEFAULT_TIMEOUT", "detect_gpus", "detect_machine"]

DEFAULT_TIMEOUT = 5.0  # seconds, per probe

GpuProbe = Callable[[], GpuFacts]


def detect_gpus(
    system: str,
    timeout: float = DEFAULT_TIMEOUT,
    root: Path = Path("/"),
    environ: Optional[Mapping[str, str]] = None,
    lookup: CcLookup = knowledge_base_lookup,
    wsl: bool = False,
) -> GpuFacts:
    """Driver and GPUs from the first probe that answers, with every failure as a note."""
    if system == "Darwin":
        return GpuFacts(notes=("macOS: no NVIDIA CUDA driver exists for current macOS",))
    probes: list[tuple[str, GpuProbe]] = [
        ("NVML", lambda: nvml.probe(timeout, system, root, environ)),
        ("nvidia-smi", lambda: nvidia_smi.probe(timeout, system, root, environ)),
    ]
    if system == "Linux" and not wsl:
        if tegra.is_jetson(root):  # before /proc and /sys: its GPU is on no bus
            probes.append(("device tree", lambda: tegra.probe(root)))
        probes.append(("/proc and /sys", lambda: linux.probe(root)))
    elif system == "Windows":
        probes.append(("Win32_VideoController", lambda: windows.probe(timeout)))
    notes: list[str] = []
    for i, (label, probe) in enumerate(probes):
        try:
            facts = probe()
        except ProbeError as exc:
            notes.append(str(exc))
            continue
        except Exception as exc:  # a probe must never take detect down
            notes.append(f"{label} probe failed unexpectedly: {type(exc).__name__}: {exc}")
            continue
        notes.extend(facts.notes)
        if i == len(probes) - 1 and i >= 2:
            notes.append(
                f"NVIDIA driver tools did not answer; driver and GPUs read from {label} "
                "(reinstall or repair the NVIDIA driver)"
            )
        driver = _checked_driver(facts.driver, notes)
        gpus = fill_compute_capability(facts.gpus, lookup)
        for gpu in gpus:
            if gpu.compute_capability is None:
                notes.append(f"compute capability of GPU {gpu.index} ({gpu.name}) is unknown")
        return GpuFacts(driver=driver, gpus=gpus, notes=tuple(notes))
    if wsl:
        notes.append("WSL2: the GPU driver is the Windows host's; install it on Windows")
    notes.append("no NVIDIA GPU found")
    return GpuFacts(notes=tuple(notes))


def _checked_driver(driver: Optional[Driver], notes: list[str]) -> Optional[Driver]:
    if driver is None:
        return None
    try:
        check_driver_text(driver.version)
    except MachineError as exc:
        notes.append(str(exc))
        return None
    return driver


def _os_info(system: str, root: Path, environ: Optional[Mapping[str, str]]) -> OSInfo:
    if system == "Windows":
        return windows.os_info()
    if system == "Darwin":
        return macos.os_info()
    return linux.os_info(root, environ)


def detect_machine(
    timeout: float = DEFAULT_TIMEOUT,
    root: Path = Path("/"),
    environ: Optional[Mapping[str, str]] = None,
    lookup: CcLookup = knowledge_base_lookup,
    system: Optional[str] = None,
) -> Machine:
    """Observe this machine: OS, CPU, conda platform, glibc, Pythons, NVIDIA driver and GPUs."""
    env = os.environ if environ is None else environ
    system = system or platform.system()
    notes: list[str] = []
    os_info = _os_info(system, root, env)
    family = os_info.family

    raw_arch = platform.machine() or ("AMD64" if sys.platform == "win32" else "")
    try:
        arch = normalize_arch(raw_arch)
    except MachineError as exc:
        notes.append(str(exc))
        arch = raw_arch
    if system == "Darwin" and arch == "x86_64" and macos.rosetta_translated(min(timeout, 1.0)):
        arch = "aarch64"
        notes.append("this Python runs under Rosetta 2 on Apple silicon (osx-arm64 machine)")
    try:
        conda = conda_platform(family, arch)
    except MachineError as exc:
        notes.append(str(exc))
        conda = ""

    glibc = linux.glibc_version() if family == "linux" else None
    gpu_facts = detect_gpus(system, timeout, root, env, lookup, wsl=os_info.wsl)
    found_pythons, py_notes = pythons.probe(timeout, system, env)
    notes += gpu_facts.notes
    notes += py_notes
    return Machine(
        os=os_info,
        arch=arch,
        platform=conda,
        glibc=glibc,
        pythons=found_pythons,
        driver=gpu_facts.driver,
        gpus=gpu_facts.gpus,
        notes=tuple(notes),
    )
