"""What a GPU probe returns, and the knowledge-base fallback for compute capability."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Optional

from gpuenv.machine import Driver, Gpu

PLACEHOLDER_NAME = "NVIDIA GPU "  # + PCI id, for GPUs seen on the bus but not named by a driver


@dataclass(frozen=True)
class KbHit:
    compute_capability: str  # "X.Y"
    by: str  # "PCI id" | "name"
    name: str = ""  # the knowledge base's name for the GPU


# (name, "10de:1347" or None) -> what the knowledge base knows, or None
CcLookup = Callable[[str, Optional[str]], Optional[KbHit]]


@dataclass(frozen=True)
class GpuFacts:
    driver: Optional[Driver] = None
    gpus: tuple[Gpu, ...] = ()
    notes: tuple[str, ...] = ()


def pci_id(vendor: str, device: str) -> str:
    """'10DE', '0x1347' -> '10de:1347'."""
    v = vendor.lower().removeprefix("0x").zfill(4)
    d = device.lower().removeprefix("0x").zfill(4)
    return f"{v}:{d}"


def cuda_from_int(value: int) -> Optional[str]:
    """NVML/CUDA encode versions as 1000*major + 10*minor: 12020 -> '12.2'."""
    if value <= 0:
        return None
    return f"{value // 1000}.{(value % 1000) // 10}"


def knowledge_base_lookup(name: str, pci: Optional[str]) -> Optional[KbHit]:
    """Compute capability from gpuenv's knowledge base, by PCI device id first, then by name."""
    try:
        from gpuenv.recipes import load_knowledge_base

        kb = load_knowledge_base()
    except Exception:  # the knowledge base is optional for detection
        return None
    if pci:
        try:
            hit = kb.find_gpu(pci_id=pci.split(":")[-1].lower())
        except Exception:
            hit = None
        if hit is not None and getattr(hit, "compute_capability", None):
            return KbHit(str(hit.compute_capability), "PCI id", str(getattr(hit, "name", "")))
    if name and not name.startswith(PLACEHOLDER_NAME):
        try:
            hit = kb.find_gpu(name=name)
        except Exception:  # AmbiguousGpu: a name shared by chips of different CC
            hit = None
        if hit is not None and getattr(hit, "compute_capability", None):
            return KbHit(str(hit.compute_capability), "name", str(getattr(hit, "name", "")))
    return None


def fill_compute_capability(gpus: tuple[Gpu, ...], lookup: CcLookup) -> tuple[Gpu, ...]:
    """Give every GPU without a compute capability the knowledge base's, saying so in .source."""
    out = []
    for gpu in gpus:
        if gpu.compute_capability is None:
            hit = lookup(gpu.name, gpu.pci_id)
            if hit is not None:
                src = f"{gpu.source}; " if gpu.source else ""
                name = gpu.name
                if name.startswith(PLACEHOLDER_NAME) and hit.name:
                    name = hit.name
                gpu = replace(
                    gpu,
                    name=name,
                    compute_capability=hit.compute_capability,
                    source=f"{src}compute capability from gpuenv knowledge base (by {hit.by})",
                )
        out.append(gpu)
    return tuple(out)
