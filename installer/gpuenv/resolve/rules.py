"""The rules a candidate build must pass on a target; each says why when it fails.

A candidate is one (release, build) of one framework. Rules are pure functions over the
knowledge base and the target; the first failing rule rejects the candidate with its name and a
sentence a person can act on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from packaging.version import Version

from gpuenv.machine import cc_tuple, parse_driver_version
from gpuenv.recipes import (
    Build,
    CudnnRelease,
    KnowledgeBase,
    Release,
    Sourced,
    major_minor,
)
from gpuenv.recipes.archs import coverage
from gpuenv.recipes.model import CudaMajor, KnownBroken, Toolkit

# The build-naming helpers stay importable from here (assemble and the lock stage use them).
from gpuenv.resolve.availability import available_pythons, unavailable
from gpuenv.resolve.availability import build_package as build_package
from gpuenv.resolve.availability import labelled_project as labelled_project
from gpuenv.resolve.availability import published_version as published_version
from gpuenv.resolve.requirements import FrameworkRequirement, Pin, parse_pin
from gpuenv.resolve.target import Target
from gpuenv.versions import version_key

_FILES = {"torch": "pytorch.toml", "tensorflow": "tensorflow.toml", "jax": "jax.toml"}
WINDOWS_NATIVE_HINT = "WSL2 runs the Linux GPU builds (see the plan's advice for what they need)"


@dataclass(frozen=True)
class Candidate:
    """A build that runs on the target, with what it needs there."""

    release: Release
    build: Build
    pythons: tuple[str, ...]  # Python versions usable on the target, oldest first
    warnings: tuple[str, ...]
    companions: tuple[str, ...]  # pins this candidate needs on this target (installed)
    constraints: tuple[str, ...]  # caps on packages it may pull in (cuDNN for old GPUs)
    on_gpu: bool  # False for CPU builds, and for CUDA builds taken to run on the CPU
    # Why each cap in `constraints` is there, with the row it rests on.
    constraint_reasons: tuple[str, ...] = ()

    @property
    def framework(self) -> str:
        return self.release.framework

    # A CUDA build run on the CPU leaves out what only the GPU needs: the extra that brings the
    # CUDA wheels and the conda CUDA libraries (a wheel's unconditional requirements stay).
    @property
    def extra(self) -> Optional[str]:
        return self.build.extra if self.on_gpu else None

    @property
    def pip_libs(self) -> tuple[str, ...]:
        return self.build.pip_libs if self.on_gpu or not self.build.extra else ()

    @property
    def conda_libs(self) -> tuple[str, ...]:
        return self.build.conda_libs if self.on_gpu else ()

    @property
    def label(self) -> str:
        return candidate_label(self.release, self.build)


@dataclass(frozen=True)
class Rejection:
    """A build that does not run on the target, the rule that says so, and its source."""

    framework: str
    version: str
    variant: str
    rule: str
    message: str
    needs_driver: Optional[str] = None  # the driver that would lift this rejection, if only that
    source: str = ""  # the knowledge-base row the rejection rests on: its primary source
    caveat: str = ""  # when that row is unverified, or its builds are recorded as incomplete

    @property
    def label(self) -> str:
        return f"{self.framework} {self.version} [{self.variant}]"


def cite(row: Sourced, *, incomplete: bool = False) -> tuple[str, str]:
    """(source, caveat) of a knowledge-base row, for a rejection that rests on it."""
    caveats = []
    if incomplete:
        caveats.append(
            "rests on data marked incomplete (builds_complete = false): a build missing from"
            " recipes/ may exist"
        )
    if not row.verified:
        caveats.append(
            "the row is not verified against its source" + (f" ({row.note})" if row.note else "")
        )
    return row.source, "; ".join(caveats)


def candidate_label(release: Release, build: Build) -> str:
    return f"{release.framework} {release.version} [{build.variant}]"


def rejection(
    release: Release,
    build: Build,
    rule: str,
    message: str,
    needs_driver: Optional[str],
    row: Sourced,
    *,
    incomplete: bool = False,
) -> Rejection:
    """A build refused by `rule`, citing the knowledge-base row the refusal rests on."""
    source, caveat = cite(row, incomplete=incomplete)
    return Rejection(
        release.framework,
        release.version,
        build.variant,
        rule,
        message,
        needs_driver,
        source=source,
        caveat=caveat,
    )


def evaluate(
    kb: KnowledgeBase,
    target: Target,
    req: FrameworkRequirement,
    release: Release,
    build: Build,
    *,
    on_cpu: bool = False,
) -> Candidate | Rejection:
    """Whether this build runs on the target (on its GPU, or with `on_cpu` on its CPU)."""

    def reject(
        rule: str,
        message: str,
        needs_driver: Optional[str] = None,
        row: Optional[Sourced] = None,
        incomplete: bool = False,
    ) -> Rejection:
        row = row or release.provenance
        return rejection(release, build, rule, message, needs_driver, row, incomplete=incomplete)

    if not req.allows(release.version):
        return reject("requirement", f"{release.version} does not satisfy {req.text!r}")
    if build.is_gpu and on_cpu and req.extras:
        # the extra asked for CUDA: a CPU plan would silently drop it
        return reject("extra", f"{req.text!r} asks for a CUDA build, and the plan is for the CPU")
    missing = unavailable(target.available, release, build, target.platform)
    if missing:
        return reject("unavailable", missing)
    if target.platform not in build.platforms:
        return reject(
            "platform",
            _platform_message(kb, target, release, build),
            incomplete=not release.builds_complete,
        )
    pythons = available_pythons(
        target.available, release, build, target.platform, _pythons(release, target)
    )
    for project in req.with_projects:
        # a companion planned beside it must have wheels for the chosen Python too
        theirs = release.related_python.get(project, {}).get(target.platform)
        if theirs is not None:
            pythons = tuple(p for p in pythons if p in theirs)
    if not pythons:
        if target.python and release.python.get(target.platform):
            have = ", ".join(release.python[target.platform])
            return reject(
                "python", f"no wheels for Python {target.python} on {target.platform} (has {have})"
            )
        return reject(
            "platform", f"no wheels for {target.platform}", incomplete=not release.builds_complete
        )
    if release.unlockable:  # after the platform: elsewhere, "not for this platform" says more
        return reject("unlockable", release.unlockable)
    for project in req.with_projects:
        # A package asked for by name is planned from data or refused, never dropped.
        companion = release.related.get(project)
        if companion is None:
            return reject(
                "companion",
                f"no {project} release is recorded for {release.framework} {release.version}"
                f" (recipes/{_FILES.get(release.framework, '')}), so {project} cannot be planned"
                " with it",
            )
        if not req.project_allows(project, companion):
            return reject("requirement", f"its {project} is {companion}, outside {req.text!r}")
    warnings: list[str] = []
    companions = list(release.companions) + list(build.companions)
    constraints: list[str] = []
    constraint_reasons: list[str] = []
    if build.is_gpu and on_cpu:
        warnings.append(_cuda_build_on_cpu(release, build, target))
    elif build.is_gpu:
        if not target.wants_gpu or target.cc is None:
            return reject("no-gpu", "a GPU build, and the plan is for the CPU")
        outcome = _check_gpu(kb, target, release, build)
        if isinstance(outcome, Rejection):
            return outcome
        warnings.extend(outcome[0])
        constraints.extend(outcome[1])
        constraint_reasons.extend(outcome[2])
    return Candidate(
        release,
        build,
        pythons,
        tuple(warnings),
        tuple(dict.fromkeys(companions)),
        constraints=tuple(dict.fromkeys(constraints)),
        on_gpu=build.is_gpu and not on_cpu,
        constraint_reasons=tuple(dict.fromkeys(constraint_reasons)),
    )


def _cuda_build_on_cpu(release: Release, build: Build, target: Target) -> str:
    """Why a CUDA build runs on the CPU, truly: what it carries, and why no CPU-only build."""
    carries = (
        "brings CUDA libraries it will not use"
        if build.pip_libs and not build.extra
        else "carries GPU code it will not use"
    )
    cpu_only = [b for b in release.builds if not b.is_gpu and target.platform in b.platforms]
    if not cpu_only:
        why = f"no CPU-only build of {release.framework} {release.version} is recorded for {target.platform}"
    else:
        names = ", ".join(sorted({build_package(release, b) for b in cpu_only}))
        why = f"its CPU-only build ({names}) does not fit this request"
    return f"{candidate_label(release, build)} is a CUDA build: it runs on the CPU, and {carries} ({why})"


def _pythons(release: Release, target: Target) -> tuple[str, ...]:
    versions = release.python.get(target.platform, ())
    if target.python:
        versions = tuple(v for v in versions if v == target.python)
    return _oldest_first(versions)


# Memoised: every build of a release asks for the same list (and most releases share one).
@lru_cache(maxsize=256)
def _oldest_first(versions: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(sorted(versions, key=version_key))


def _platform_message(kb: KnowledgeBase, target: Target, release: Release, build: Build) -> str:
    if not release.builds_complete:
        return (
            f"no {build.variant} build for {target.platform} is recorded; the knowledge base lists"
            f" only the verified builds of {release.framework} {release.version}"
        )
    has_gpu_build_here = any(b.is_gpu and target.platform in b.platforms for b in release.builds)
    if build.is_gpu and not has_gpu_build_here and target.os_family == "windows" and not target.wsl:
        last = _last_gpu_release_on(kb, release.framework, target.platform)
        if last is None:
            return f"{release.framework} has no GPU build for native Windows; {WINDOWS_NATIVE_HINT}"
        return (
            f"no GPU build for native Windows (the last one is {release.framework} {last});"
            f" {WINDOWS_NATIVE_HINT}"
        )
    if build.is_gpu and target.os_family == "macos":
        return "no CUDA build for macOS (NVIDIA CUDA is not supported there)"
    return f"the {build.variant} build is not published for {target.platform}"


def _last_gpu_release_on(kb: KnowledgeBase, framework: str, platform: str) -> Optional[str]:
    for release in kb.framework(framework).releases:  # newest first
        if not release.builds_complete:
            continue
        if any(b.is_gpu and platform in b.platforms for b in release.builds):
            return release.version
    return None


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


def _check_gpu(
    kb: KnowledgeBase, target: Target, release: Release, build: Build
) -> Rejection | tuple[list[str], list[str], list[str]]:
    """Architecture, driver and cuDNN rules for a CUDA build on the target GPU: the first rule
    that rejects decides; the others may add a warning."""
    assert target.cc is not None and build.cuda is not None
    broken = _broken(kb, release, build, target)
    if broken is not None:
        return broken
    arch = _arch(release, build, target)
    if isinstance(arch, Rejection):
        return arch
    case = _case(kb, target, release, build, build.cuda, *arch)
    warnings: list[str] = _broken_unknown(kb, release, build, target)
    for rule in _DRIVER_RULES:
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


def _broken(
    kb: KnowledgeBase, release: Release, build: Build, target: Target
) -> Optional[Rejection]:
    """Known broken beats PTX: the knowledge base records the build failing on one of the GPUs
    (a framework-wide [[broken]] row with its issue threads, or the build's own broken_on)."""
    for each in target.ccs:
        each_sm = f"sm_{each.replace('.', '')}"
        for row in _known_broken(kb, release, build):
            if each in row.compute_capabilities:
                return rejection(
                    release,
                    build,
                    "broken",
                    f"recorded as not working on {each_sm}: {row.reason}. Instead: {row.instead}",
                    None,
                    row.provenance,
                )
        if each in build.broken_on:
            return rejection(
                release,
                build,
                "broken",
                f"recorded as not working on {each_sm}: {build.provenance.note}",
                None,
                build.provenance,
            )
    return None


def _broken_unknown(kb: KnowledgeBase, release: Release, build: Build, target: Target) -> list[str]:
    """A GPU next to those a [[broken]] row covers, that no report covers either way."""
    out = []
    for row in _known_broken(kb, release, build):
        unknown = [c for c in target.ccs if c in row.unknown_on]
        if unknown:
            reported = ", ".join(f"sm_{c.replace('.', '')}" for c in row.compute_capabilities)
            out.append(
                f"{candidate_label(release, build)} is reported broken on {reported}, and no report"
                f" says whether it runs on {', '.join('sm_' + c.replace('.', '') for c in unknown)}"
                f" ({row.provenance.source}); if it fails, use instead: {row.instead}"
            )
    return out


def _known_broken(kb: KnowledgeBase, release: Release, build: Build) -> list[KnownBroken]:
    framework = kb.frameworks.get(release.framework)
    if framework is None or not framework.broken:
        return []
    return [row for row in framework.broken if row.covers(release, build)]


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
    if not case.floor_min or not case.below(case.floor_min):
        return None
    major = int(case.cuda.split(".")[0])
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
    outcome = _check_cudnn(case.kb, case.target, case.build)
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


def _check_cudnn(
    kb: KnowledgeBase, target: Target, build: Build
) -> tuple[str, Sourced] | list[tuple[str, CudnnRelease]]:
    """A message when the build's own cuDNN lacks kernels for the GPU; else companion pins.

    Pinned cuDNN (torch's ==, TensorFlow's tested version) is checked directly. Open ranges
    (`nvidia-cudnn-cu12>=9.8,<10`) are capped below the first release that dropped the GPU.
    """
    assert target.cc is not None
    cc = cc_tuple(target.cc)
    if build.cudnn:
        release = kb.cudnn.get(major_minor(build.cudnn))
        if (
            release
            and release.min_compute_capability
            and cc < cc_tuple(release.min_compute_capability)
        ):
            return (
                f"its cuDNN {build.cudnn} has no kernels below compute capability"
                f" {release.min_compute_capability}",
                release.provenance,
            )
    pins: list[tuple[str, CudnnRelease]] = []
    for text in build.pip_libs:
        req = parse_pin(text)
        if not req.name.startswith("nvidia-cudnn-cu"):
            continue
        first_bad = _first_cudnn_without(kb, cc, req)
        if first_bad is None:
            continue
        if any(s.operator == "==" for s in req.specifier):
            return (
                f"its cuDNN ({text}) has no kernels for compute capability {target.cc}",
                first_bad.provenance,
            )
        pins.append((f"{req.name}<{first_bad.version}", first_bad))
    return pins


def _first_cudnn_without(
    kb: KnowledgeBase, cc: tuple[int, int], req: Pin
) -> Optional[CudnnRelease]:
    """The oldest cuDNN release the requirement admits that has no kernels for cc."""
    lacking = [
        release
        for release in kb.cudnn.values()
        if release.min_compute_capability and cc < cc_tuple(release.min_compute_capability)
    ]
    # sorted after filtering: usually none lack kernels, and resolve asks once per CUDA build
    for release in sorted(lacking, key=lambda r: Version(r.version)):
        # any version of this major.minor line admitted by the requirement?
        probe = [Version(release.version + ".0"), Version(release.version + ".999")]
        if any(req.specifier.contains(v, prereleases=True) for v in probe):
            return release
    return None
