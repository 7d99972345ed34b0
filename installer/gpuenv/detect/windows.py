"""Windows facts: 10 vs 11, and NVIDIA GPUs through CIM when NVML and nvidia-smi both failed."""

from __future__ import annotations

import json
import platform
import re
import sys
from typing import Any, Optional

from gpuenv.detect._facts import GpuFacts, pci_id
from gpuenv.detect._run import ProbeError, run
from gpuenv.machine import Driver, Gpu, OSInfo

SOURCE = "Win32_VideoController"
POWERSHELL_COMMAND = (
    "Get-CimInstance Win32_VideoController | "
    "Select-Object Name,PNPDeviceID,DriverVersion,AdapterRAM | ConvertTo-Json"
)
_PNP = re.compile(r"PCI\\VEN_([0-9A-F]{4})&DEV_([0-9A-F]{4})", re.IGNORECASE)
_UINT32_MAX = 2**32 - 1


def windows_name(build: int) -> str:
    """Windows 11 kept the 10.0 version number; only the build tells them apart."""
    return "Windows 11" if build >= 22000 else "Windows 10"


def os_info() -> OSInfo:
    try:
        build = int(sys.getwindowsversion().build)  # type: ignore[attr-defined,unused-ignore]
    except (AttributeError, ValueError):
        build = int(platform.version().split(".")[-1] or 0)
    version = platform.version()  # "10.0.19045"
    return OSInfo(family="windows", name=windows_name(build), version=version, windows_build=build)


def nvidia_driver_version(windows_version: str) -> Optional[str]:
    """Windows' driver version to NVIDIA's: 31.0.15.5186 -> 551.86, 22.21.13.8253 -> 382.53.

    NVIDIA's version is the last five digits of the last two fields.
    """
    parts = windows_version.strip().split(".")
    if len(parts) != 4 or not all(p.isdigit() for p in parts):
        return None
    digits = (parts[2] + parts[3].zfill(4))[-5:]
    if len(digits) < 5:
        return None
    return f"{int(digits[:3])}.{digits[3:]}"


def parse_video_controllers(text: str) -> GpuFacts:
    """`Get-CimInstance Win32_VideoController | ConvertTo-Json` -> NVIDIA GPUs and driver."""
    try:
        data: Any = json.loads(text) if text.strip() else []
    except json.JSONDecodeError as exc:
        raise ProbeError(f"Win32_VideoController: not JSON ({exc.msg})") from None
    items = data if isinstance(data, list) else [data]
    gpus: list[Gpu] = []
    versions: list[str] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        m = _PNP.search(str(item.get("PNPDeviceID") or ""))
        if not m or m.group(1).lower() != "10de":
            continue
        ram = item.get("AdapterRAM")
        # AdapterRAM is a uint32: it saturates at 4 GiB, so a full value says nothing
        mem = int(ram) // 2**20 if isinstance(ram, int) and 0 < ram < _UINT32_MAX else None
        gpus.append(
            Gpu(
                name=str(item.get("Name") or f"NVIDIA GPU {pci_id(*m.groups())}"),
                compute_capability=None,
                memory_mib=mem,
                pci_id=pci_id(m.group(1), m.group(2)),
                source=SOURCE,
                index=len(gpus),
            )
        )
        v = nvidia_driver_version(str(item.get("DriverVersion") or ""))
        if v:
            versions.append(v)
    if not gpus:
        raise ProbeError("Win32_VideoController lists no NVIDIA GPU")
    driver = Driver(version=versions[0]) if versions else None
    return GpuFacts(driver=driver, gpus=tuple(gpus))


def probe(timeout: float, powershell: str = "powershell") -> GpuFacts:
    res = run(
        [powershell, "-NoProfile", "-NonInteractive", "-Command", POWERSHELL_COMMAND],
        timeout=timeout,
    )
    if res.returncode != 0:
        raise ProbeError(f"PowerShell failed (exit status {res.returncode}): {res.output[:200]}")
    return parse_video_controllers(res.stdout)
