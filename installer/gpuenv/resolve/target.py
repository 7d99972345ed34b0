"""What resolve plans for: the platform, the one GPU that decides, the driver, the options."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from gpuenv.errors import USAGE_EXIT, GpuenvError
from gpuenv.machine import Gpu, Machine, cc_tuple, parse_driver_version
from gpuenv.recipes import AmbiguousGpu, GpuMatch, GpuRecord, KnowledgeBase

# Availability stays importable from here (the lock stage and tests name it so).
from gpuenv.resolve.availability import Availability as Availability


class TargetError(GpuenvError, ValueError):
    exit_code = USAGE_EXIT


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
    # The newest "first driver" among the planned GPUs' generations (Blackwell: R570), and whose
    generation_min_driver: Optional[str] = None
    generation_min_owner: Optional[str] = None
    gpu_warnings: tuple[str, ...] = ()  # how the GPU was identified, when that is uncertain

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
        driver=parse_driver_version(driver.version) if driver else None,
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
    )


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


# Compiled on first use (re caches it): a GPU described by its compute capability never needs it.
_PCI_TEXT = r"^(?:(?:0x)?10de:)?(?:0x)?([0-9a-f]{4})$"
_BARE_HEX = r"^[0-9a-f]{4}$"
# Longer than any GPU name NVIDIA sells (the longest known is under 60 characters): a longer
# text is a paste gone wrong, refused before the name index is searched.
MAX_GPU_TEXT = 200
# The source of a GPU described with --gpu: its name is what the person typed, read as typed.
DESCRIBED_GPU_SOURCE = "described (--gpu), compute capability from knowledge base"


def lookup_gpu(
    kb: KnowledgeBase, name: str, pci_id: Optional[str] = None, *, typed: bool = False
) -> GpuRecord:
    """A GPU record by PCI id or name (a name may also be a PCI id: "10de:1380"), or a
    TargetError that says how to go on. `typed`: a name a person wrote (--gpu, a lab file),
    which may leave out brand words or be part of a name ("RTX 3090", "A100"); detected names
    are read strictly."""
    if typed and len(name) > MAX_GPU_TEXT:
        raise TargetError(
            f"GPU name of {len(name)} characters: longer than any NVIDIA GPU's name; pass its"
            " name as `nvidia-smi --query-gpu=name --format=csv` prints it, or its compute"
            " capability (e.g. --gpu 6.1)"
        )
    try:
        as_pci = _pci_reading(kb, name, typed) if pci_id is None else None
        if as_pci:
            record = kb.find_gpu(pci_id=as_pci)
            if record is None:
                raise TargetError(
                    f"unknown PCI id {name!r}: no NVIDIA GPU in gpuenv's knowledge base has"
                    " device id " + as_pci + "; pass its compute capability instead"
                    " (e.g. --gpu 6.1; NVIDIA lists them at https://developer.nvidia.com/cuda-gpus)"
                )
        elif typed:
            match = kb.match_typed_gpu(name)
            record = match.record if match else None
        else:
            record = kb.find_gpu(name=name, pci_id=pci_id)
    except AmbiguousGpu as exc:
        raise TargetError(str(exc)) from None
    if record is None:
        close = kb.close_gpu_names(name) if typed else []
        raise TargetError(
            f"unknown GPU {name!r}: gpuenv's knowledge base has no such NVIDIA GPU"
            + (f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else "")
            + ". Pass its compute capability instead (e.g. --gpu 6.1; NVIDIA lists them at"
            " https://developer.nvidia.com/cuda-gpus), or check the spelling"
            " (`nvidia-smi --query-gpu=name --format=csv` prints it)."
        )
    return record


def _pci_reading(kb: KnowledgeBase, text: str, typed: bool) -> Optional[str]:
    """The PCI device id a text stands for, or None when it is a name. "10de:1380" and
    "0x1380" are ids; four bare hex digits are one only when no GPU is typed so: people type
    model numbers ("A100", "1080") far more often than bare device ids, which nvidia-smi and
    lspci print with their "10de:"/"0x" prefix."""
    as_pci = re.match(_PCI_TEXT, text.strip().lower())
    if as_pci is None:
        return None
    if typed and re.match(_BARE_HEX, text.strip().lower()) and kb.match_typed_gpu(text):
        return None
    return as_pci.group(1)


def described_pci_id(kb: KnowledgeBase, text: str, record: GpuRecord) -> Optional[str]:
    """The PCI id a `--gpu` text pins down: the one typed, or the row's when the name means one
    chip only; None when the name was read as one of several chips or GPUs (the plan says so)."""
    as_pci = _pci_reading(kb, text, typed=True)
    if as_pci:
        return f"10de:{as_pci}"
    match = kb.match_typed_gpu(text)
    if match is None or match.unconfirmed or match.alternatives or not record.pci_ids:
        return None
    return f"10de:{record.pci_ids[0]}"


def cc_only_name(cc: Optional[str]) -> str:
    """The name of a GPU described by its compute capability alone (`--gpu 8.6`)."""
    return f"GPU with compute capability {cc}"


def gpu_identity_warnings(kb: KnowledgeBase, gpu: Gpu) -> list[str]:
    """When a GPU known only by name was taken for the chip NVIDIA's tables confirm, say which
    other chips carry that name and how to plan for one of them instead."""
    if gpu.pci_id or not gpu.name or gpu.name == cc_only_name(gpu.compute_capability):
        return []
    try:
        if gpu.source == DESCRIBED_GPU_SOURCE:  # typed: "A100" may name several GPUs
            match = kb.match_typed_gpu(gpu.name)
        else:
            match = kb.match_gpu(name=gpu.name)
    except AmbiguousGpu:
        return []
    if match is not None and match.alternatives:
        return [_alternatives_warning(gpu.name, match)]
    if match is None or not match.unconfirmed:
        return []
    chosen = match.record
    others = "; ".join(
        f"{o.chip} {o.kind}, compute capability {o.compute_capability}"
        f" (PCI {', '.join('10de:' + p for p in o.pci_ids)})"
        for o in match.unconfirmed
    )
    flags = ", ".join(
        dict.fromkeys(
            f"--gpu {o.compute_capability} or --gpu 10de:{o.pci_ids[0]}"
            for o in match.unconfirmed
            if o.pci_ids
        )
    )
    return [
        f"{gpu.name!r} was planned as the {chosen.chip} (compute capability"
        f" {chosen.compute_capability}), the chip NVIDIA's name tables list under that name;"
        f" other boards sold under it: {others}, which NVIDIA's tables do not list. If yours is"
        f" one of them, plan with {flags} (`nvidia-smi --query-gpu=pci.device_id --format=csv`"
        " prints the PCI id)"
    ]


def _alternatives_warning(text: str, match: GpuMatch) -> str:
    names = [match.record.name, *(a.name for a in match.alternatives)]
    shown = ", ".join(names[:_SHOWN]) + (
        f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else ""
    )
    return (
        f"{text!r} names {len(names)} GPUs in gpuenv's knowledge base ({shown}), all of compute"
        f" capability {match.record.compute_capability}: the plan holds for each of them;"
        " pass the full name to plan for one"
    )


_SHOWN = 8  # names a warning lists


def _python_pin(python: Optional[str]) -> Optional[str]:
    if python is None:
        return None
    parts = python.strip().split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]) or parts[0] != "3":
        raise TargetError(f"--python {python!r}: expected a Python 3 version such as 3.11")
    return f"{parts[0]}.{parts[1]}"
