"""Driver facts from the knowledge base: what CUDA a driver runs, which driver a GPU should get."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from gpuenv.machine import Machine, MachineError, parse_driver_version
from gpuenv.recipes import Generation, KnowledgeBase, Toolkit
from gpuenv.recipes.jetson import TegraSoc
from gpuenv.versions import version_key


def driver_os(machine: Machine) -> str:
    """Whose driver tables apply: WSL2 runs the Windows host's driver."""
    return "windows" if machine.os.family == "windows" or machine.os.wsl else "linux"


def driver_tuple(text: Optional[str]) -> Optional[tuple[int, ...]]:
    if not text:
        return None
    try:
        return parse_driver_version(text)
    except MachineError:
        return None


def jetson_soc(kb: KnowledgeBase, machine: Machine) -> Optional[TegraSoc]:
    """The machine's Jetson GPU, whose driver comes with JetPack and is no desktop driver."""
    found = (kb.jetson.soc_for(g.compute_capability or "") for g in machine.gpus)
    return next((soc for soc in found if soc is not None), None)


def toolkit_min_driver(toolkit: Toolkit, os_key: str) -> str:
    return toolkit.min_driver_windows if os_key == "windows" else toolkit.min_driver_linux


def newest_toolkit(kb: KnowledgeBase) -> Optional[Toolkit]:
    return max(kb.toolkits.values(), key=lambda t: version_key(t.version), default=None)


def cuda_driver_floor(kb: KnowledgeBase, cuda: str, os_key: str) -> Optional[str]:
    """The oldest driver that runs any CUDA M.x build (minor-version compatibility)."""
    major = kb.cuda_majors.get(int(cuda.split(".")[0]))
    if major is None:
        return None
    return major.min_driver_windows if os_key == "windows" else major.min_driver_linux


def cuda_own_driver(kb: KnowledgeBase, cuda: str, os_key: str) -> Optional[str]:
    """The driver the CUDA M.m toolkit itself shipped with (needed for PTX JIT and new features)."""
    toolkit = kb.toolkit(cuda)
    return toolkit_min_driver(toolkit, os_key) if toolkit else None


@dataclass(frozen=True)
class MaxCuda:
    version: Optional[str]
    source: str  # "reported by the driver" or "knowledge base"


def max_cuda(kb: KnowledgeBase, machine: Machine) -> MaxCuda:
    """The newest CUDA the machine's driver supports: its own answer, else the toolkit table's."""
    if machine.driver is None:
        return MaxCuda(None, "")
    if machine.driver.cuda:
        return MaxCuda(machine.driver.cuda, "reported by the driver")
    soc = jetson_soc(kb, machine)
    if soc is not None:  # a Jetson's driver is its JetPack's: the JetPack names its CUDA
        packs = kb.jetson.jetpacks_for(machine.driver.version, soc.name)
        cudas = sorted({j.cuda for j in packs}, key=version_key)
        where = "recipes/jetson.toml: JetPack " + " or ".join(j.version for j in packs)
        return MaxCuda(cudas[0], where) if cudas else MaxCuda(None, "")
    have = driver_tuple(machine.driver.version)
    if have is None:
        return MaxCuda(None, "")
    os_key = driver_os(machine)
    fitting = [
        t.version
        for t in kb.toolkits.values()
        if (need := driver_tuple(toolkit_min_driver(t, os_key))) and need <= have
    ]
    if not fitting:
        return MaxCuda(None, "knowledge base: older than every toolkit's driver")
    return MaxCuda(max(fitting, key=version_key), "knowledge base: toolkit minimum drivers")


def limiting_generation(kb: KnowledgeBase, machine: Machine) -> Optional[Generation]:
    """Of the machine's GPUs, the generation whose driver support ended first (None: no limit)."""
    best: Optional[Generation] = None
    for gpu in machine.gpus:
        if gpu.compute_capability is None:
            continue
        gen = kb.generation_for(gpu.compute_capability)
        if gen is None or not (gen.last_driver_branch or "").isdigit():
            continue
        assert gen.last_driver_branch is not None
        if best is None or int(gen.last_driver_branch) < int(best.last_driver_branch or 0):
            best = gen
    return best


def generation_max_cuda(gen: Generation, machine: Machine) -> Optional[str]:
    """The newest CUDA with code for the machine's GPUs of that generation (Kepler sm_30:
    10.2, although the generation's sm_35 goes to 11.8)."""
    found = [
        gen.max_cuda_for(g.compute_capability)
        for g in machine.gpus
        if g.compute_capability in gen.compute_capabilities
    ]
    known = [c for c in found if c]
    return min(known, key=version_key) if known else gen.max_cuda


@dataclass(frozen=True)
class DriverAdvice:
    text: str  # "install NVIDIA driver ≥ 610.43.02 (...)"
    minimum: Optional[str]  # the version to reach, when one is known
    branch: Optional[str]  # the last driver branch of the GPU's generation, when capped


def recommended_driver(kb: KnowledgeBase, machine: Machine) -> Optional[DriverAdvice]:
    """Which driver to install: the newest toolkit's minimum, capped by the GPU generation's
    last driver branch."""
    os_key = driver_os(machine)
    where = " on the Windows host (not inside WSL2)" if machine.os.wsl else ""
    newest = newest_toolkit(kb)
    if newest is None:
        return None
    need = toolkit_min_driver(newest, os_key)
    gen = limiting_generation(kb, machine)
    if gen is not None and gen.last_driver_branch is not None:
        branch = gen.last_driver_branch
        if int(need.split(".")[0]) > int(branch):
            top = generation_max_cuda(gen, machine)
            upto = f"; with it, builds up to CUDA {top} run" if top else ""
            return DriverAdvice(
                f"install the newest NVIDIA R{branch} driver{where}: R{branch} is the last driver"
                f" branch that supports {gen.name} GPUs{upto}",
                None,
                branch,
            )
    return DriverAdvice(
        f"install NVIDIA driver ≥ {need}{where} (what CUDA {newest.version}, the newest toolkit"
        " in gpuenv's knowledge base, needs)",
        need,
        None,
    )


def needed_driver_text(kb: KnowledgeBase, machine: Machine, cuda: str) -> str:
    """What to install so a CUDA `cuda` build runs here, capped by the GPU's last branch."""
    os_key = driver_os(machine)
    floor = cuda_driver_floor(kb, cuda, os_key)
    own = cuda_own_driver(kb, cuda, os_key)
    where = " on the Windows host" if machine.os.wsl else ""
    target = floor or own
    if target is None:
        return f"install an NVIDIA driver that supports CUDA {cuda}{where}"
    gen = limiting_generation(kb, machine)
    branch = gen.last_driver_branch if gen else None
    top = generation_max_cuda(gen, machine) if gen else None
    beyond = top is not None and version_key(cuda) > version_key(top)
    if (
        gen is not None
        and branch is not None
        and (beyond or int(target.split(".")[0]) > int(branch))
    ):
        return (
            f"{gen.name} GPUs end with driver branch R{branch}, which cannot run CUDA {cuda}"
            f" builds: re-plan for this machine (`gpuenv setup`, or `gpuenv resolve`) to get a"
            f" build for CUDA {top or 'an older CUDA'} or older"
        )
    text = f"install NVIDIA driver ≥ {target}{where} (the floor for CUDA {cuda.split('.')[0]}.x"
    own_fits = branch is None or (own is not None and int(own.split(".")[0]) <= int(branch))
    if own and own != target and own_fits:
        text += f"; CUDA {cuda}'s own driver, ≥ {own}, is better"
    return text + ")"
