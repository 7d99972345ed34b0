"""What resolve plans for: the platform, the one GPU that decides, the driver, the options."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Optional

from gpuenv.machine import Gpu, Machine, cc_tuple, parse_driver_version
from gpuenv.recipes import AmbiguousGpu, GpuRecord, KnowledgeBase


class TargetError(ValueError):
    pass


@dataclass(frozen=True)
class Availability:
    """What the reachable sources publish, as the lock stage found it (resolve stays pure)."""

    versions: Mapping[str, Mapping[str, tuple[str, ...]]]  # package -> version -> sources
    unreachable: tuple[str, ...] = ()  # sources that did not answer, and why
    # package -> version -> Pythons ("3.11") with a wheel for the platform; "*" for any Python
    pythons: Mapping[str, Mapping[str, frozenset[str]]] = field(default_factory=dict)


@dataclass(frozen=True)
class Target:
    platform: str
    os_family: str
    wsl: bool
    gpu: Optional[Gpu]  # the GPU the plan is named for (the lowest compute capability)
    cc: Optional[str]
    ccs: tuple[str, ...]  # every compute capability the plan must run on, lowest first
    generation: Optional[str]
    last_driver_branch: Optional[str]
    driver: Optional[tuple[int, ...]]
    driver_text: Optional[str]
    driver_cuda: Optional[str]  # max CUDA as the driver itself reports it
    python: Optional[str]  # --python pin, "X.Y"
    no_gpu: bool
    require_gpu: bool
    available: Optional[Availability] = None

    @property
    def driver_os(self) -> str:
        """Whose driver tables apply: WSL2 runs the Windows host's driver."""
        return "windows" if self.os_family == "windows" or self.wsl else "linux"

    @property
    def wants_gpu(self) -> bool:
        return self.gpu is not None and not self.no_gpu

    def describe_gpu(self) -> str:
        if self.gpu is None or self.cc is None:
            return "no NVIDIA GPU"
        if len(self.ccs) > 1:
            sms = ", ".join(f"sm_{c.replace('.', '')}" for c in self.ccs)
            return f"GPUs of compute capability {', '.join(self.ccs)} ({sms})"
        sm = f"sm_{self.cc.replace('.', '')}"
        if "compute capability" in self.gpu.name:  # described by its compute capability only
            return f"a GPU of compute capability {self.cc} ({sm})"
        return f"{self.gpu.name} (compute capability {self.cc}, {sm})"


def build_target(
    machine: Machine,
    kb: KnowledgeBase,
    *,
    python: Optional[str] = None,
    no_gpu: bool = False,
    require_gpu: bool = False,
    gpu_index: Optional[int] = None,
    available: Optional[Availability] = None,
) -> Target:
    if no_gpu and require_gpu:
        raise TargetError("--no-gpu and --require-gpu contradict each other")
    gpus = [_with_cc(g, kb) for g in machine.gpus]
    gpu: Optional[Gpu] = None
    if gpus:
        if gpu_index is not None:
            matches = [g for g in gpus if g.index == gpu_index]
            if not matches:
                have = ", ".join(str(g.index) for g in gpus)
                raise TargetError(f"--gpu-index {gpu_index}: this machine has GPUs {have}")
            gpu = matches[0]
        else:
            gpu = min(gpus, key=lambda g: cc_tuple(g.compute_capability or "0.0"))
    planned = [gpu] if gpu_index is not None else gpus
    ccs = tuple(
        sorted({g.compute_capability for g in planned if g and g.compute_capability}, key=cc_tuple)
    )
    gen = kb.generation_for(gpu.compute_capability) if gpu and gpu.compute_capability else None
    driver = machine.driver
    return Target(
        platform=machine.platform,
        os_family=machine.os.family,
        wsl=machine.os.wsl,
        gpu=gpu,
        cc=gpu.compute_capability if gpu else None,
        ccs=ccs,
        generation=gen.name if gen else None,
        last_driver_branch=gen.last_driver_branch if gen else None,
        driver=parse_driver_version(driver.version) if driver else None,
        driver_text=driver.version if driver else None,
        driver_cuda=driver.cuda if driver else None,
        python=_python_pin(python),
        no_gpu=no_gpu,
        require_gpu=require_gpu,
        available=available,
    )


def _with_cc(gpu: Gpu, kb: KnowledgeBase) -> Gpu:
    if gpu.compute_capability:
        return gpu
    record = lookup_gpu(kb, gpu.name, gpu.pci_id)
    return Gpu(
        name=gpu.name,
        compute_capability=record.compute_capability,
        memory_mib=gpu.memory_mib,
        pci_id=gpu.pci_id,
        source=(gpu.source + "; " if gpu.source else "") + "compute capability from knowledge base",
        index=gpu.index,
    )


def lookup_gpu(kb: KnowledgeBase, name: str, pci_id: Optional[str] = None) -> GpuRecord:
    """A GPU record by PCI id or name, or a TargetError that says how to go on."""
    try:
        record = kb.find_gpu(name=name, pci_id=pci_id)
    except AmbiguousGpu as exc:
        raise TargetError(str(exc)) from None
    if record is None:
        raise TargetError(
            f"unknown GPU {name!r}: gpuenv's knowledge base has no such NVIDIA GPU. Pass its"
            " compute capability instead (e.g. --gpu 6.1; NVIDIA lists them at"
            " https://developer.nvidia.com/cuda-gpus), or check the spelling"
            " (`nvidia-smi --query-gpu=name --format=csv` prints it)."
        )
    return record


def _python_pin(python: Optional[str]) -> Optional[str]:
    if python is None:
        return None
    parts = python.strip().split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]) or parts[0] != "3":
        raise TargetError(f"--python {python!r}: expected a Python 3 version such as 3.11")
    return f"{parts[0]}.{parts[1]}"
