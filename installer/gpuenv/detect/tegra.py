"""A Jetson's GPU from its device tree, for when NVML and nvidia-smi did not answer.

The GPU of a Tegra SoC is no PCI device, and JetPack 5 ships no nvidia-smi: the board names its
SoC in /proc/device-tree/compatible ("nvidia,tegra234"), and its driver is the Jetson Linux
(L4T) release, in /proc/driver/nvidia/version or /etc/nv_tegra_release
("# R36 (release), REVISION: 4.3, ...", read as r36.4.3). Every function takes the file-system
`root`, so tests run on fixture trees.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Optional

from gpuenv.detect import linux
from gpuenv.detect._facts import GpuFacts
from gpuenv.detect._run import ProbeError
from gpuenv.machine import Driver, Gpu

_RELEASE = re.compile(r"#\s*R(\d{1,2})\s*\(release\),\s*REVISION:\s*(\d+(?:\.\d+)?)")
_MAX_BYTES = 4096  # a device-tree string property or the release line: a few dozen bytes


def _read(path: Path) -> str:
    """A bounded read of a regular file; a FIFO or a device reads as nothing (never blocks)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return os.read(fd, _MAX_BYTES).decode("utf-8", errors="replace")  # procfs says size 0
    except OSError:
        return ""
    finally:
        os.close(fd)


def compatible(root: Path = Path("/")) -> tuple[str, ...]:
    """The device tree's compatible strings (NUL-separated in the file)."""
    text = _read(root / "proc/device-tree/compatible")
    return tuple(s for s in text.split("\0") if s)


def is_jetson(root: Path = Path("/")) -> bool:
    """Whether the device tree names a Tegra SoC (any other machine: no probe, no note)."""
    return any(s.startswith("nvidia,tegra") for s in compatible(root))


def l4t_release(root: Path = Path("/")) -> Optional[str]:
    """'r36.4.3' from /etc/nv_tegra_release, or None."""
    m = _RELEASE.match(_read(root / "etc/nv_tegra_release").lstrip())
    return f"r{m.group(1)}.{m.group(2)}" if m else None


def probe(root: Path = Path("/")) -> GpuFacts:
    """The Jetson's GPU by its SoC (named as recipes/jetson.toml names it) and its driver."""
    strings = compatible(root)
    if not is_jetson(root):
        raise ProbeError("no Tegra SoC in /proc/device-tree/compatible (not a Jetson)")
    from gpuenv.recipes import load_knowledge_base

    soc = load_knowledge_base().jetson.soc_for_compatible(strings)
    if soc is None:
        tegra = next(s for s in strings if s.startswith("nvidia,tegra"))
        raise ProbeError(f"a Jetson ({tegra}) whose GPU recipes/jetson.toml does not record")
    model = _read(root / "proc/device-tree/model").strip("\0 \n") or f"Jetson {soc.name}"
    version = linux.driver_version(root) or l4t_release(root)
    gpu = Gpu(
        name=model.removeprefix("NVIDIA ").removesuffix(" Developer Kit"),
        compute_capability=soc.compute_capability,
        source=f"/proc/device-tree ({soc.compatible}; recipes/jetson.toml)",
    )
    return GpuFacts(driver=Driver(version=version) if version else None, gpus=(gpu,))
