"""The GPU rules, one function each, in the order they apply: known broken
(gpuenv.resolve.broken_rule), the architecture, the driver floors (_DRIVER_RULES: found,
generation, WSL, framework, the CUDA major, PTX JIT), the warnings (own minimum, unknown toolkit,
PTX), then cuDNN (gpuenv.resolve.cudnn_rule). Each returns a Rejection or a warning; the first
rejection decides (gpuenv.resolve.rules.evaluate runs them through check_gpu)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Optional

from gpuenv.machine import cc_tuple, parse_driver_version
from gpuenv.recipes import (
    Build,
    KnowledgeBase,
    Release,
    Sourced,
    major_minor,
)
from gpuenv.recipes.archs import coverage
from gpuenv.recipes.model import CudaMajor, Toolkit
from gpuenv.resolve.broken_rule import broken_unknown, known_broken, untried_where_newer_fail
from gpuenv.resolve.cudnn_rule import check_cudnn
from gpuenv.resolve.jetson_rule import jetpack_cuda, reads_jetpack
from gpuenv.resolve.rejection import Rejection, candidate_label, rejection
from gpuenv.resolve.target import Target


@dataclass(frozen=True)
class GpuCase:
    """One CUDA build on the target GPU, with what every GPU rule asks about it."""

    kb: KnowledgeBase
    target: Target
    release: Release
    build: Build
    cuda: str  # the build's CUDA version
    arch: str  # "sass": machine code for every planned GPU; "ptx": some need the JIT
    sm: str  # the GPU the JIT serves when arch is "ptx" (else the deciding GPU's sm)
    toolkit: Optional[Toolkit]  # the build's CUDA toolkit row
    floor: Optional[CudaMajor]  # its CUDA major's minor-version-compatibility row
    own_min: Optional[str]  # the toolkit's own minimum driver on the target's driver OS
    floor_min: Optional[str]  # the major's minor-version-compatibility floor there

    @property
    def label(self) -> str:
        return candidate_label(self.release, self.build)

    def reject(
        self,
        rule: str,
        message: str,
        needs_driver: Optional[str] = None,
        row: Optional[Sourced] = None,
    ) -> Rejection:
        return rejection(
            self.release, self.build, rule, message, needs_driver, row or self.build.provenance
        )

    def below(self, version: str) -> bool:
        """Whether the target's driver is older than `version` (it has one: see _driver_found)."""
        assert self.target.driver is not None
        return self.target.driver < parse_driver_version(version)


def check_gpu(
    kb: KnowledgeBase, target: Target, release: Release, build: Build
) -> Rejection | tuple[list[str], list[str], list[str]]:
    """Architecture, driver and cuDNN rules for a CUDA build on the target GPU: the first rule
    that rejects decides; the others may add a warning."""
    assert target.cc is not None and build.cuda is not None
    broken = known_broken(kb, release, build, target)
    if broken is not None:
        return broken
    arch = _arch(release, build, target)
    if isinstance(arch, Rejection):
        return arch
    case = _case(kb, target, release, build, build.cuda, *arch)
    warnings: list[str] = broken_unknown(kb, release, build, target)
    untried = untried_where_newer_fail(kb, release, build, target, case.arch, case.sm)
    if isinstance(untried, Rejection):
        return untried
    if untried:
        warnings.append(untried)
    for rule in (jetpack_cuda, _ptx_jit) if reads_jetpack(target) else _DRIVER_RULES:
        outcome = rule(case)
        if isinstance(outcome, Rejection):
            return outcome
        if outcome is not None:
            warnings.append(outcome)
    cudnn = _cudnn_rule(case)
    if isinstance(cudnn, Rejection):
        return cudnn
    constraints, reasons = cudnn
    assumed = _cudnn_assumed(case)
    if assumed:
        warnings.append(assumed)
    return warnings, constraints, reasons


def _cudnn_assumed(case: GpuCase) -> Optional[str]:
    """Honest about assumptions: "its cuDNN has kernels for this GPU" rests on an unverified
    row exactly when the GPU is of the generation at that row's lower edge (Kepler on cuDNN
    8.7, whose support matrix nobody could read)."""
    cudnn, cc = case.build.cudnn, case.target.cc
    row = case.kb.cudnn.get(major_minor(cudnn)) if cudnn else None
    if row is None or row.provenance.verified or not row.min_compute_capability or cc is None:
        return None
    if cc_tuple(cc)[0] != cc_tuple(row.min_compute_capability)[0]:
        return None
    return (
        f"{case.label}: that its cuDNN {cudnn} has kernels for compute capability {cc} rests on"
        f" an unverified row (recipes/cudnn.toml {row.version}: {row.provenance.note})"
    )


def _case(
    kb: KnowledgeBase,
    target: Target,
    release: Release,
    build: Build,
    cuda: str,
    arch: str,
    sm: str,
) -> GpuCase:
    toolkit = kb.toolkit(cuda)
    floor = kb.cuda_majors.get(int(cuda.split(".")[0]))
    return GpuCase(
        kb,
        target,
        release,
        build,
        cuda,
        arch,
        sm,
        toolkit,
        floor,
        own_min=_min_driver(toolkit, target) if toolkit else None,
        floor_min=_min_driver_major(floor, target) if floor else None,
    )


def _arch(release: Release, build: Build, target: Target) -> Rejection | tuple[str, str]:
    """Machine code or PTX for every planned GPU, the lowest first: ("sass" | "ptx", the sm
    that needs the JIT, or the deciding GPU's), or a rejection naming the first GPU without."""
    assert target.cc is not None
    arch, sm = "sass", f"sm_{target.cc.replace('.', '')}"
    for each in target.ccs:
        each_sm = f"sm_{each.replace('.', '')}"
        support = arch_support(build, each)
        if support is None:
            assert build.archs is not None
            return rejection(
                release,
                build,
                "gpu-arch",
                f"no kernels for {each_sm}: built for {_fmt_archs(build.archs.sass)}"
                + (f", PTX {_fmt_archs(build.archs.ptx, 'compute_')}" if build.archs.ptx else ""),
                None,
                build.archs.provenance,
            )
        if support == "ptx":
            arch, sm = "ptx", each_sm
    return arch, sm


def _driver_found(case: GpuCase) -> Optional[Rejection]:
    """Some driver: without one no CUDA build runs (the fix is the highest floor that applies)."""
    if case.target.driver is not None:
        return None
    fix = _highest(case.own_min or case.floor_min, case.target.generation_min_driver)
    row = (
        case.toolkit.provenance if case.toolkit else (case.floor.provenance if case.floor else None)
    )
    return case.reject(
        "driver",
        f"no NVIDIA driver found; CUDA {case.cuda} needs driver ≥ {fix or '?'}",
        needs_driver=fix,
        row=row,
    )


def _generation_floor(case: GpuCase) -> Optional[Rejection]:
    """The driver knows the chip at all: the generation's first supporting driver."""
    target = case.target
    gen_min = target.generation_min_driver
    if not gen_min or not case.below(gen_min):
        return None
    return case.reject(
        "driver",
        f"driver {target.driver_text} predates {target.generation_min_owner} GPUs: they need"
        f" driver ≥ {gen_min} (R{target.branch_of(gen_min)}, the first branch that supports"
        " them)",
        needs_driver=_highest(gen_min, case.floor_min),
        row=_generation_row(case.kb, target.generation_min_owner),
    )


def _wsl_driver(case: GpuCase) -> Optional[Rejection]:
    """CUDA in WSL2 at all: the Windows host's driver must be new enough (NVIDIA's guide)."""
    wsl = case.kb.wsl
    if not case.target.wsl or wsl is None or not case.below(wsl.min_driver_windows):
        return None
    return case.reject(
        "driver",
        f"CUDA in WSL2 needs a Windows driver ≥ {wsl.min_driver_windows}"
        f" (R{case.target.branch_of(wsl.min_driver_windows)} or later); driver is"
        f" {case.target.driver_text}",
        # what lifts it for this build: WSL2's own floor, and the build's floors beyond it
        needs_driver=_highest(wsl.min_driver_windows, case.floor_min, _documented_min(case)),
        row=wsl.provenance,
    )


def _documented_min(case: GpuCase) -> Optional[str]:
    row = case.kb.framework_driver(case.release.framework, _framework_os(case.target), case.cuda)
    return row.min_driver if row else None


def _wsl_generation(case: GpuCase) -> Optional[str]:
    """Maxwell runs CUDA in WSL2, but NVIDIA's guide does not officially support it."""
    wsl, target = case.kb.wsl, case.target
    if not target.wsl or wsl is None or target.cc is None:
        return None
    low = cc_tuple(target.ccs[0] if target.ccs else target.cc)
    if cc_tuple(wsl.unofficial_from) <= low < cc_tuple(wsl.min_compute_capability):
        return (
            f"{case.label}: NVIDIA's CUDA on WSL guide supports GPUs from compute capability"
            f" {wsl.min_compute_capability} (Pascal) officially; this GPU is {target.cc}, 'not"
            f" officially supported' in WSL2 ({wsl.provenance.source.split(' ')[0]})"
        )
    return None


def _framework_floor(case: GpuCase) -> Optional[Rejection]:
    """The framework's own documented driver floor for its CUDA major on this OS."""
    target = case.target
    documented = case.kb.framework_driver(case.release.framework, _framework_os(target), case.cuda)
    if documented is None or not case.below(documented.min_driver):
        return None
    where = "WSL2 (the Windows host's driver)" if target.wsl else target.driver_os
    major = int(case.cuda.split(".")[0])
    return case.reject(
        "driver",
        f"{case.release.framework} documents driver ≥ {documented.min_driver} for its CUDA"
        f" {major} builds on {where}; driver is {target.driver_text}",
        needs_driver=documented.min_driver,
        row=documented.provenance,
    )


def _major_floor(case: GpuCase) -> Optional[Rejection]:
    """A driver that meets the toolkit's own minimum runs the build natively; below it, the CUDA
    major's minor-version-compatibility floor must hold (CUDA 11.0's own 450.51.05 is below the
    11.x floor 450.80.02: a driver between the two runs 11.0 builds, and no other 11.x)."""
    if case.own_min and not case.below(case.own_min):
        return None
    major = int(case.cuda.split(".")[0])
    if case.floor is not None and not case.floor.minor_version_compatible:
        need = case.own_min or case.floor_min
        if not need or not case.below(need):
            return None
        return case.reject(
            "driver",
            f"driver {case.target.driver_text} is older than CUDA {case.cuda}'s own minimum"
            f" (≥ {need}); CUDA {major} has no minor-version compatibility, so a {major}.x"
            " build needs its own toolkit's driver",
            needs_driver=need,
            row=case.toolkit.provenance if case.toolkit else case.floor.provenance,
        )
    if not case.floor_min or not case.below(case.floor_min):
        return None
    lowest = _lowest(case.own_min, case.floor_min)
    if lowest != case.floor_min:
        return case.reject(
            "driver",
            f"driver {case.target.driver_text} is older than CUDA {case.cuda}'s own minimum"
            f" (≥ {lowest}; CUDA {major}.x's minor-version-compatibility floor is"
            f" ≥ {case.floor_min})",
            needs_driver=lowest,
            row=case.toolkit.provenance if case.toolkit else None,
        )
    return case.reject(
        "driver",
        f"driver {case.target.driver_text} is older than CUDA {major}.x needs (≥ {case.floor_min})",
        needs_driver=case.floor_min,
        row=case.floor.provenance if case.floor else None,
    )


def _ptx_driver(case: GpuCase) -> Optional[Rejection]:
    """PTX JIT needs the toolkit's own driver: minor-version compatibility does not cover it."""
    if case.arch != "ptx" or not case.own_min or not case.below(case.own_min):
        return None
    return case.reject(
        "driver",
        f"only PTX for {case.sm}, and JIT-compiling PTX from CUDA {case.cuda} needs driver"
        f" ≥ {case.own_min} (driver is {case.target.driver_text})",
        needs_driver=case.own_min,
        row=case.toolkit.provenance if case.toolkit else None,
    )


def _own_minimum(case: GpuCase) -> Optional[str]:
    """Below the toolkit's own minimum the build runs through minor-version compatibility."""
    if not case.own_min or not case.below(case.own_min):
        return None
    return (
        f"{case.label} runs through CUDA minor-version compatibility:"
        f" driver {case.target.driver_text} is older than CUDA {case.cuda}'s own ≥ {case.own_min}"
    )


def _toolkit_known(case: GpuCase) -> Optional[str]:
    if case.toolkit is None and case.floor is None:
        return f"CUDA {case.cuda} is not in the knowledge base; driver checks skipped"
    return None


def _ptx_jit(case: GpuCase) -> Optional[str]:
    if case.arch != "ptx":
        return None
    return (
        f"{case.label} has no machine code for {case.sm}: kernels are"
        " JIT-compiled from PTX at first start (minutes), then cached"
    )


# In order: the first rejection decides; warnings keep this order in the plan.
_DRIVER_RULES: tuple[Callable[[GpuCase], Optional[Rejection | str]], ...] = (
    _driver_found,
    _generation_floor,
    _wsl_driver,
    _wsl_generation,
    _framework_floor,
    _major_floor,
    _ptx_driver,
    _own_minimum,
    _toolkit_known,
    _ptx_jit,
)


def _cudnn_rule(case: GpuCase) -> Rejection | tuple[list[str], list[str]]:
    """The build's cuDNN has kernels for the GPU, or companion caps that keep it so, with why."""
    outcome = check_cudnn(case.kb, case.target, case.build)
    if isinstance(outcome, tuple):
        message, row = outcome
        return case.reject("cudnn-arch", message, row=row)
    constraints, reasons = [], []
    for pin, first_bad in outcome:
        constraints.append(pin)
        reasons.append(
            f"cap {pin}: cuDNN {first_bad.version} and newer have no kernels below compute"
            f" capability {first_bad.min_compute_capability}, and this GPU is {case.target.cc}"
            f" (source: {first_bad.provenance.source})"
        )
    return constraints, reasons


def _generation_row(kb: KnowledgeBase, name: Optional[str]) -> Optional[Sourced]:
    return next((g.provenance for g in kb.generations if g.name == name), None)


def arch_support(build: Build, cc: str) -> Optional[str]:
    """'sass' when the build has machine code that runs on cc, 'ptx' when only PTX, else None."""
    if build.archs is None:
        return None
    return coverage(build.archs.sass, build.archs.ptx, cc)


def _fmt_archs(ccs: tuple[str, ...], prefix: str = "sm_") -> str:
    return ", ".join(prefix + c.replace(".", "") for c in ccs) or "nothing"


def _highest(*versions: Optional[str]) -> Optional[str]:
    known = [v for v in versions if v]
    return max(known, key=parse_driver_version) if known else None


def _lowest(*versions: Optional[str]) -> Optional[str]:
    known = [v for v in versions if v]
    return min(known, key=parse_driver_version) if known else None


def _framework_os(target: Target) -> str:
    if target.wsl:
        return "wsl"
    return "windows" if target.os_family == "windows" else "linux"


def _min_driver(toolkit: object, target: Target) -> Optional[str]:
    value = getattr(toolkit, f"min_driver_{target.driver_os}", None)
    return str(value) if value else None


def _min_driver_major(major: object, target: Target) -> Optional[str]:
    value = getattr(major, f"min_driver_{target.driver_os}", None)
    return str(value) if value else None
