"""The rules a candidate build must pass on a target; each says why when it fails.

A candidate is one (release, build) of one framework. Rules are pure functions over the
knowledge base and the target; the first failing rule rejects the candidate with its name and a
sentence a person can act on. This module checks the release, the platform and the Python; the
GPU rules (architecture, driver floors, PTX, cuDNN, known broken) are gpuenv.resolve.gpu_rules,
one function each; the answers (Candidate, Rejection) are gpuenv.resolve.rejection.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

from gpuenv.recipes import (
    Build,
    KnowledgeBase,
    Release,
    Sourced,
)

# The build-naming helpers stay importable from here (assemble and the lock stage use them).
from gpuenv.resolve.availability import available_pythons, unavailable
from gpuenv.resolve.availability import build_package as build_package
from gpuenv.resolve.availability import labelled_project as labelled_project
from gpuenv.resolve.availability import published_version as published_version
from gpuenv.resolve.gpu_rules import arch_support as arch_support
from gpuenv.resolve.gpu_rules import check_gpu
from gpuenv.resolve.jetson_rule import jetson_only
from gpuenv.resolve.rejection import Candidate as Candidate
from gpuenv.resolve.rejection import Rejection as Rejection
from gpuenv.resolve.rejection import candidate_label as candidate_label
from gpuenv.resolve.rejection import cite as cite
from gpuenv.resolve.rejection import rejection as rejection
from gpuenv.resolve.requirements import FrameworkRequirement
from gpuenv.resolve.target import Target
from gpuenv.versions import version_key

_FILES = {"torch": "pytorch.toml", "tensorflow": "tensorflow.toml", "jax": "jax.toml"}
WINDOWS_NATIVE_HINT = "WSL2 runs the Linux GPU builds (see the plan's advice for what they need)"
# Windows on Arm with an NVIDIA GPU (RTX Spark, GB10-class, compute capability 12.1): no
# framework publishes a win_arm64 CUDA build on the default index or the PyTorch index; NVIDIA
# publishes win_arm64 CUDA torch on its own index (torch 2.14.0+cu134 at nvtorch_oot, reported in
# github.com/unslothai/unsloth/pull/10282, 2026-09-04; PyTorch itself "doesn't officially support
# windows ARM64 wheels", github.com/meta-pytorch/torchcodec/issues/1672). Its wheels were not
# read here, so no build row records it and nothing is planned from it.
WINDOWS_ARM_NVIDIA = (
    ": NVIDIA publishes win_arm64 CUDA builds of torch on its own index (nvtorch_oot), which the"
    " knowledge base does not record because their wheels were not read"
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
    jetson = jetson_only(release, build, target) if build.is_gpu and not on_cpu else None
    if jetson is not None:  # before "not published here": what a Jetson runs instead says more
        return jetson
    missing = unavailable(target.available, release, build, target.platform)
    if missing:
        return reject("unavailable", missing)
    if target.platform not in build.platforms:
        message, row = _platform_message(kb, target, release, build)
        return reject("platform", message, row=row, incomplete=not release.builds_complete)
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
            return reject("python", _no_python(release, req, target))
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
        outcome = check_gpu(kb, target, release, build)
        if isinstance(outcome, Rejection):
            return outcome
        warnings.extend(outcome[0])
        if build.system_libs:
            # planned on the GPU, and said plainly: without these it would run on the CPU
            warnings.append(
                f"{candidate_label(release, build)} uses the GPU only with {build.system_libs}"
            )
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


def _no_python(release: Release, req: FrameworkRequirement, target: Target) -> str:
    """Why the pinned Python has no wheels here: the release's own, a companion's, or the
    reachable sources' (a release that has the Python must not be said to lack it)."""
    python, platform = target.python, target.platform
    own = release.python[platform]
    if python not in own:
        return f"no wheels for Python {python} on {platform} (has {', '.join(own)})"
    for project in req.with_projects:
        theirs = release.related_python.get(project, {}).get(platform)
        if theirs is not None and python not in theirs:
            return (
                f"its {project} has no wheels for Python {python} on {platform} (has"
                f" {', '.join(theirs)})"
            )
    return f"the reachable sources have no Python {python} wheels of this build for {platform}"


def _platform_message(
    kb: KnowledgeBase, target: Target, release: Release, build: Build
) -> tuple[str, Optional[Sourced]]:
    """Why the build is not for this platform, and the row that says so when it is not the
    release's own (native Windows: the last GPU build's, whose source states where GPU builds
    for Windows end)."""
    if build.is_gpu and target.platform == "win-arm64" and not target.wsl:
        return _windows_arm_message(kb, release.framework), None
    if not release.builds_complete:
        return (
            f"no {build.variant} build for {target.platform} is recorded; the knowledge base lists"
            f" only the verified builds of {release.framework} {release.version}"
        ), None
    has_gpu_build_here = any(b.is_gpu and target.platform in b.platforms for b in release.builds)
    if build.is_gpu and not has_gpu_build_here and target.os_family == "windows" and not target.wsl:
        last = _last_gpu_build_on(kb, release.framework, target.platform)
        if last is None:
            hint = f"{release.framework} has no GPU build for native Windows; {WINDOWS_NATIVE_HINT}"
            return hint, None
        version, last_build = last
        return (
            f"no GPU build for native Windows (the last one is {release.framework} {version});"
            f" {WINDOWS_NATIVE_HINT}"
        ), last_build.provenance
    if build.is_gpu and target.os_family == "macos":
        return "no CUDA build for macOS (NVIDIA CUDA is not supported there)", None
    return f"the {build.variant} build is not published for {target.platform}", None


def _windows_arm_message(kb: KnowledgeBase, framework: str) -> str:
    """Why no GPU build runs on Windows on Arm, and what does: WSL2 with the Linux aarch64 GPU
    builds where the framework has any, NVIDIA's own torch index named but not planned from."""
    nvidia = WINDOWS_ARM_NVIDIA if framework == "torch" else ""
    message = f"no CUDA build of {framework} for Windows on Arm (win-arm64) is recorded{nvidia}; "
    if _last_gpu_build_on(kb, framework, "linux-aarch64") is not None:
        return message + "WSL2 runs its Linux aarch64 GPU builds (--os wsl --arch arm64 plans them)"
    return message + f"{framework} has no Linux aarch64 GPU build either, so not under WSL2"


def _last_gpu_build_on(
    kb: KnowledgeBase, framework: str, platform: str
) -> Optional[tuple[str, Build]]:
    for release in kb.framework(framework).releases:  # newest first
        if not release.builds_complete:
            continue
        for build in release.builds:
            if build.is_gpu and platform in build.platforms:
                return release.version, build
    return None
