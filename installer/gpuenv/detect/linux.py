"""Linux facts from files: os-release, glibc, WSL, and the NVIDIA driver and GPUs without tools.

Every function takes the file-system `root`, so tests run on fixture trees.
"""

from __future__ import annotations

import os
import platform
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Optional

from gpuenv.detect._facts import PLACEHOLDER_NAME, GpuFacts, pci_id
from gpuenv.detect._run import ProbeError
from gpuenv.machine import Driver, Gpu, OSInfo

NVIDIA_VENDOR = "0x10de"
_PROC_VERSION = re.compile(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+\.\d+(?:\.\d+)*)\s")


def _read(path: Path) -> Optional[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def parse_os_release(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition("=")
        if sep and key and not key.startswith("#"):
            out[key] = value.strip().strip("\"'")
    return out


def os_release(root: Path = Path("/")) -> dict[str, str]:
    for rel in ("etc/os-release", "usr/lib/os-release"):
        text = _read(root / rel)
        if text is not None:
            return parse_os_release(text)
    return {}


def is_wsl(root: Path = Path("/"), environ: Optional[Mapping[str, str]] = None) -> bool:
    env = os.environ if environ is None else environ
    if env.get("WSL_DISTRO_NAME"):
        return True
    text = _read(root / "proc/version") or ""
    return "microsoft" in text.lower()


def os_info(root: Path = Path("/"), environ: Optional[Mapping[str, str]] = None) -> OSInfo:
    rel = os_release(root)
    name = rel.get("PRETTY_NAME") or rel.get("NAME") or "Linux"
    return OSInfo(
        family="linux",
        name=name,
        version=rel.get("VERSION_ID", ""),
        wsl=is_wsl(root, environ),
    )


def glibc_version() -> Optional[str]:
    """'2.36' for glibc, None for musl and others."""
    try:
        text = os.confstr("CS_GNU_LIBC_VERSION")
    except (AttributeError, ValueError, OSError):
        text = None
    if text:
        lib, _, ver = text.partition(" ")
        return ver if lib == "glibc" and ver else None
    lib, ver = platform.libc_ver()
    return ver if lib == "glibc" and ver else None


def parse_proc_driver_version(text: str) -> Optional[str]:
    """/proc/driver/nvidia/version -> '535.86.05' (proprietary and open kernel modules)."""
    m = _PROC_VERSION.search(text + " ")
    return m.group(1) if m else None


def driver_version(root: Path = Path("/")) -> Optional[str]:
    text = _read(root / "proc/driver/nvidia/version")
    if text:
        v = parse_proc_driver_version(text)
        if v:
            return v
    mod = (_read(root / "sys/module/nvidia/version") or "").strip()
    return mod if re.fullmatch(r"\d+\.\d+(?:\.\d+)*", mod) else None


def pci_gpus(root: Path = Path("/")) -> tuple[tuple[str, str], ...]:
    """(slot, '10de:XXXX') for every NVIDIA display-class (0x03xxxx) device, in bus order."""
    base = root / "sys/bus/pci/devices"
    try:
        slots = sorted(os.listdir(base))
    except OSError:
        return ()
    found = []
    for slot in slots:
        d = base / slot
        vendor = (_read(d / "vendor") or "").strip().lower()
        klass = (_read(d / "class") or "").strip().lower()
        device = (_read(d / "device") or "").strip().lower()
        if vendor == NVIDIA_VENDOR and klass.startswith("0x03") and device:
            found.append((slot, pci_id(vendor, device)))
    return tuple(found)


def probe(root: Path = Path("/")) -> GpuFacts:
    """Driver version and GPUs from /proc and /sys, for when NVML and nvidia-smi both failed."""
    version = driver_version(root)
    gpus = tuple(
        Gpu(
            name=f"{PLACEHOLDER_NAME}{pci}",
            compute_capability=None,
            pci_id=pci,
            source=f"/sys/bus/pci ({slot})",
            index=i,
        )
        for i, (slot, pci) in enumerate(pci_gpus(root))
    )
    if version is None and not gpus:
        raise ProbeError("no NVIDIA driver in /proc and no NVIDIA GPU on the PCI bus")
    return GpuFacts(driver=Driver(version=version) if version else None, gpus=gpus)
