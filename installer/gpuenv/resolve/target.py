"""What resolve plans for: the platform, the one GPU that decides, the driver, the options."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from gpuenv.machine import Gpu, Machine, cc_tuple, l4t_release, parse_driver_version
from gpuenv.recipes import KnowledgeBase
from gpuenv.recipes.gpu_lookup import TargetError as TargetError
from gpuenv.recipes.gpu_lookup import gpu_identity_warnings, lookup_gpu
from gpuenv.recipes.jetson import JetPack, TegraSoc

# Availability stays importable from here (the lock stage and tests name it so).
from gpuenv.resolve.availability import Availability as Availability
from gpuenv.versions import version_key


@dataclass(frozen=True)
class TegraTarget:
    """A Jetson's GPU: which CUDA wheels it runs, and the JetPack its driver string names."""

    soc: TegraSoc
    jetpacks: tuple[JetPack, ...]  # () when the driver string names no recorded release
    driver_text: Optional[str]

    @property
    def jetpack(self) -> str:
        if not self.jetpacks:
            return "a JetPack release gpuenv does not know"
        return "JetPack " + " or ".join(j.version for j in self.jetpacks)

    @property
    def cuda(self) -> Optional[str]:
        """The CUDA the JetPack provides (the lowest, when the driver names several)."""
        cudas = sorted({j.cuda for j in self.jetpacks}, key=version_key)
        return cudas[0] if cudas else None

    @property
    def builds(self) -> str:
        if not self.jetpacks:
            return (
                f"the [[jetpack]] rows for {self.soc.name} in recipes/jetson.toml say where"
                " NVIDIA's builds for each JetPack come from; pass --driver with the board's"
                " Jetson Linux release (the first line of /etc/nv_tegra_release, e.g. r36.4)"
            )
        return self.jetpacks[-1].builds


@dataclass(frozen=True)
class Target:
    """The machine as resolve sees it: platform, deciding GPU, driver, options."""

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
    python: Optional[str]  # --python pin, "X.Y"
    no_gpu: bool
    require_gpu: bool
    available: Optional[Availability] = None
    driver_branches: tuple[int, ...] = ()  # known driver branches, oldest first
    # The newest "first driver" among the planned GPUs' generations (Blackwell: R570), and the
    # generation whose floor it is (named when a driver is refused for being older)
    generation_min_driver: Optional[str] = None
    generation_min_owner: Optional[str] = None
    gpu_warnings: tuple[str, ...] = ()  # how the GPU was identified, when that is uncertain
    tegra: Optional[TegraTarget] = None  # a Jetson's GPU (recipes/jetson.toml)

    @property
    def driver_os(self) -> str:
        """Whose driver tables apply: WSL2 runs the Windows host's driver."""
        return "windows" if self.os_family == "windows" or self.wsl else "linux"

    def branch_of(self, version: str | tuple[int, ...]) -> int:
        """The driver branch of a version (Windows 472.50 and Linux 470.256.02 are both R470)."""
        parts = parse_driver_version(version) if isinstance(version, str) else version
        fitting = [b for b in self.driver_branches if b <= parts[0]]
        return fitting[-1] if fitting else parts[0]

    @property
    def driver_branch(self) -> Optional[int]:
        return self.branch_of(self.driver) if self.driver else None

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
    if gpu_index is not None and not gpus:
        raise TargetError(f"--gpu-index {gpu_index}: this machine has no NVIDIA GPU to choose")
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
    tegra = _tegra(kb, machine, ccs)
    l4t = driver is not None and l4t_release(driver.version) is not None
    if l4t and tegra is None:
        assert driver is not None
        raise TargetError(
            f"driver {driver.version} reads as a Jetson Linux (L4T) release, but no GPU planned"
            " for is a Jetson's; a desktop driver version is R100 or later (535.183.01)"
        )
    os_key = "windows" if machine.os.family == "windows" or machine.os.wsl else "linux"
    floor, owner = _generation_floor(kb, ccs, os_key)
    return Target(
        platform=machine.platform,
        os_family=machine.os.family,
        wsl=machine.os.wsl,
        gpu=gpu,
        cc=gpu.compute_capability if gpu else None,
        ccs=ccs,
        generation=gen.name if gen else None,
        last_driver_branch=gen.last_driver_branch if gen else None,
        driver=parse_driver_version(driver.version) if driver and not l4t else None,
        driver_text=driver.version if driver else None,
        python=_python_pin(python),
        no_gpu=no_gpu,
        require_gpu=require_gpu,
        available=available,
        driver_branches=kb.driver_branches,
        generation_min_driver=floor,
        generation_min_owner=owner,
        gpu_warnings=tuple(
            w for g in planned if g is not None for w in gpu_identity_warnings(kb, g)
        ),
        tegra=tegra,
    )


def _tegra(kb: KnowledgeBase, machine: Machine, ccs: tuple[str, ...]) -> Optional[TegraTarget]:
    """The Jetson GPU among those planned for, if any (recipes/jetson.toml [[soc]])."""
    soc = next((s for s in map(kb.jetson.soc_for, ccs) if s is not None), None)
    if soc is None:
        return None
    if machine.platform != "linux-aarch64":
        raise TargetError(
            f"a Jetson {soc.name} GPU (compute capability {soc.compute_capability}) is part of an"
            f" aarch64 board running Jetson Linux, not of a {machine.platform} machine; plan"
            " for --os linux --arch aarch64"
        )
    text = machine.driver.version if machine.driver else None
    jetpacks = kb.jetson.jetpacks_for(text, soc.name) if text else ()
    return TegraTarget(soc=soc, jetpacks=jetpacks, driver_text=text)


def _generation_floor(
    kb: KnowledgeBase, ccs: tuple[str, ...], os_key: str
) -> tuple[Optional[str], Optional[str]]:
    """The first driver every planned GPU's generation runs on (the highest of their floors)."""
    best: Optional[str] = None
    owner: Optional[str] = None
    for cc in ccs:
        gen = kb.generation_for(cc)
        need = gen.min_driver(os_key) if gen else None
        if (
            gen
            and need
            and (best is None or parse_driver_version(need) > parse_driver_version(best))
        ):
            best, owner = need, gen.name
    return best, owner


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


def _python_pin(python: Optional[str]) -> Optional[str]:
    if python is None:
        return None
    parts = python.strip().split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]) or parts[0] != "3":
        raise TargetError(f"--python {python!r}: expected a Python 3 version such as 3.11")
    return f"{parts[0]}.{parts[1]}"
