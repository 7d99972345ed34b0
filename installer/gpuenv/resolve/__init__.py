"""resolve: Machine + requirements -> Plan. Pure: no I/O beyond reading the knowledge base.

plan = resolve(machine, ["tensorflow", "torch"])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from packaging.version import Version

from gpuenv.machine import Machine
from gpuenv.recipes import Build, KnowledgeBase, Release, load_knowledge_base
from gpuenv.resolve.combine import best_combination, common_pythons
from gpuenv.resolve.plan import FrameworkChoice, PipRequirement, Plan, RejectedCandidate
from gpuenv.resolve.requirements import FrameworkRequirement, RequirementError, parse_requirements
from gpuenv.resolve.rules import Candidate, Rejection, evaluate
from gpuenv.resolve.target import Target, TargetError, build_target

__all__ = ["Plan", "RequirementError", "ResolveError", "TargetError", "resolve"]

DEFAULT_REQUIREMENTS = ("torch",)


class ResolveError(Exception):
    """No stack satisfies the requirements on this machine (or --require-gpu can't be met)."""


def resolve(
    machine: Machine,
    requirements: Sequence[str] = DEFAULT_REQUIREMENTS,
    *,
    kb: Optional[KnowledgeBase] = None,
    python: Optional[str] = None,
    no_gpu: bool = False,
    require_gpu: bool = False,
    gpu_index: Optional[int] = None,
) -> Plan:
    kb = kb or load_knowledge_base()
    reqs = parse_requirements(list(requirements) or list(DEFAULT_REQUIREMENTS))
    for req in reqs:
        if req.framework not in kb.frameworks:
            raise RequirementError(f"the knowledge base has no data for {req.framework}")
    target = build_target(
        machine, kb, python=python, no_gpu=no_gpu, require_gpu=require_gpu, gpu_index=gpu_index
    )
    if require_gpu and not target.wants_gpu:
        raise ResolveError(
            "--require-gpu: no NVIDIA GPU on this machine"
            + (f" ({'; '.join(machine.notes)})" if machine.notes else "")
        )

    ranked: list[list[Candidate]] = []
    gpu_counts: list[int] = []
    rejections: list[Rejection] = []
    for req in reqs:
        gpu, cpu, rejected = _candidates(kb, target, req)
        rejections.extend(rejected)
        ranked.append(gpu + cpu)
        gpu_counts.append(len(gpu))

    chosen, conflicts = best_combination(ranked, gpu_counts)
    if chosen is None:
        raise ResolveError(_infeasible(reqs, ranked, rejections, [c.message for c in conflicts]))

    on_cpu = [c for c in chosen if not c.build.is_gpu]
    if require_gpu and on_cpu:
        why = "; ".join(_why_not_gpu(c.framework, rejections, target) for c in on_cpu)
        raise ResolveError(f"--require-gpu: {why}")
    return _plan(kb, machine, target, reqs, chosen, rejections)


def _candidates(
    kb: KnowledgeBase, target: Target, req: FrameworkRequirement
) -> tuple[list[Candidate], list[Candidate], list[Rejection]]:
    gpu: list[Candidate] = []
    cpu: list[Candidate] = []
    rejected: list[Rejection] = []
    for release in kb.framework(req.framework).releases:  # newest first
        cpu_found = False
        for build in sorted(release.builds, key=_cuda_order, reverse=True):
            if not build.is_gpu and cpu_found:
                continue
            outcome = evaluate(kb, target, req, release, build)
            if isinstance(outcome, Rejection):
                if outcome.rule not in ("no-gpu",):
                    rejected.append(outcome)
                continue
            if build.is_gpu:
                gpu.append(outcome)
            else:
                cpu.append(outcome)
                cpu_found = True
    return gpu, cpu, rejected


def _cuda_order(build: Build) -> tuple[int, ...]:
    if build.cuda is None:
        return (-1,)
    return tuple(int(p) for p in build.cuda.split("."))


def _plan(
    kb: KnowledgeBase,
    machine: Machine,
    target: Target,
    reqs: Sequence[FrameworkRequirement],
    chosen: Sequence[Candidate],
    rejections: list[Rejection],
) -> Plan:
    pythons = common_pythons(chosen)
    python = pythons[-1]
    frameworks: dict[str, FrameworkChoice] = {}
    pip: list[PipRequirement] = []
    conda: list[str] = []
    companions: list[str] = []
    warnings: list[str] = []
    reasons: list[str] = [_machine_reason(machine, target)]
    for req, cand in zip(reqs, chosen):
        release, build = cand.release, cand.build
        frameworks[req.framework] = FrameworkChoice(
            name=req.framework,
            version=release.version,
            variant=build.variant,
            cuda=build.cuda,
            cudnn=build.cudnn,
            package=build.package or release.package or req.framework,
            released=release.released.isoformat() if release.released else None,
            gpu=build.is_gpu,
            related=dict(release.related),
        )
        pip.extend(_pip_requirements(req, release, build, target.platform))
        conda.extend(build.conda_libs)
        companions.extend(cand.companions)
        warnings.extend(cand.warnings)
        reasons.append(_choice_reason(req, cand, rejections, target))
        reasons.extend(_windows_last_gpu_reason(kb, cand, rejections, target))
        if target.wants_gpu and not build.is_gpu:
            warnings.append(
                f"{req.framework} {release.version} will run on the CPU: "
                + _why_not_gpu(req.framework, rejections, target)
            )
        elif not build.is_gpu and target.gpu is None and not target.no_gpu:
            warnings.append(
                f"{req.framework} {release.version} will run on the CPU: no NVIDIA GPU found"
            )
    if len(chosen) > 1 or target.python:
        span = ", ".join(f"{c.framework} {c.release.version} ({_span(c.pythons)})" for c in chosen)
        reasons.append(
            f"Python {python}: the newest version that all of them publish for {target.platform}: {span}"
        )
    else:
        reasons.append(
            f"Python {python}: the newest {chosen[0].framework} {chosen[0].release.version} publishes for {target.platform}"
        )
    released = [c.release.released for c in chosen if c.release.released]
    return Plan(
        python=python,
        platform=target.platform,
        accelerator=_accelerator(target, chosen),
        gpu=(
            {
                "name": target.gpu.name,
                "compute_capability": target.cc,
                "index": target.gpu.index,
                "generation": target.generation,
            }
            if target.gpu and target.wants_gpu
            else None
        ),
        driver=target.driver_text,
        frameworks=frameworks,
        pip=tuple(pip),
        conda=tuple(dict.fromkeys(conda)),
        companions=tuple(dict.fromkeys(companions)),
        exclude_newer=max(released).isoformat() if released else None,
        warnings=tuple(dict.fromkeys(warnings)),
        reasons=tuple(reasons),
        fixes=tuple(_fixes(chosen, rejections, target)),
        rejected=tuple(RejectedCandidate(r.label, r.rule, r.message) for r in rejections),
        knowledge_base=kb.digest[:16],
    )


def _pip_requirements(
    req: FrameworkRequirement, release: Release, build: Build, platform: str
) -> list[PipRequirement]:
    on_default_index = platform in build.pypi_default or build.index is None
    index = None if on_default_index else build.index
    local = "" if on_default_index else build.local
    package = build.package or release.package or req.framework
    extra = f"[{build.extra}]" if build.extra else ""
    out = [PipRequirement(f"{package}{extra}=={release.version}{local}", index)]
    if req.framework == "jax" and "jaxlib" in release.related:
        out.append(PipRequirement(f"jaxlib=={release.related['jaxlib']}", None))
    for project in req.with_projects:
        version = release.related.get(project)
        if version:
            out.append(PipRequirement(f"{project}=={version}{local}", index))
    return out


def _accelerator(target: Target, chosen: Sequence[Candidate]) -> str:
    if any(c.build.is_gpu for c in chosen):
        return "cuda"
    if target.platform == "osx-arm64" and any(c.framework == "torch" for c in chosen):
        return "mps"
    return "cpu"


def _span(versions: Sequence[str]) -> str:
    return versions[0] if len(versions) == 1 else f"{versions[0]}-{versions[-1]}"


def _machine_reason(machine: Machine, target: Target) -> str:
    os_name = "WSL2" if target.wsl else (machine.os.name or target.os_family)
    head = f"Machine: {os_name}, {target.platform}"
    if target.no_gpu:
        return head + ", planned for the CPU (--no-gpu)"
    if target.gpu is None:
        return head + ", no NVIDIA GPU"
    gen = f", {target.generation}" if target.generation else ""
    driver = f"driver {target.driver_text}" if target.driver_text else "no NVIDIA driver"
    tables = " (Windows driver tables: WSL2 uses the host's driver)" if target.wsl else ""
    return f"{head}, {target.describe_gpu()}{gen}, {driver}{tables}"


def _choice_reason(
    req: FrameworkRequirement, cand: Candidate, rejections: list[Rejection], target: Target
) -> str:
    release, build = cand.release, cand.build
    label = f"{release.framework} {release.version} [{build.variant}]"
    if build.is_gpu:
        what = f"the newest {req.framework} build that runs on {target.describe_gpu()}"
        if target.driver_text:
            what += f" with driver {target.driver_text}"
    elif target.wants_gpu:
        what = f"the newest {req.framework} release, on the CPU (no GPU build fits)"
    else:
        what = f"the newest {req.framework} release for {target.platform} (CPU)"
    if str(req.specifier):
        what += f", within {req.specifier}"
    newer = _newer_rejections(req.framework, release.version, rejections)
    if newer:
        top = newer[0]
        what += f"; newer: {top.label} rejected ({top.rule}: {top.message})"
        if len(newer) > 1:
            what += f", and {len(newer) - 1} more (see `gpuenv explain`)"
    return f"{label}: {what}"


def _newer_rejections(framework: str, version: str, rejections: list[Rejection]) -> list[Rejection]:
    v = Version(version)
    return [
        r
        for r in rejections
        if r.framework == framework and r.rule != "requirement" and Version(r.version) > v
    ]


def _windows_last_gpu_reason(
    kb: KnowledgeBase, cand: Candidate, rejections: list[Rejection], target: Target
) -> list[str]:
    if not (cand.build.is_gpu and target.os_family == "windows" and not target.wsl):
        return []
    newer = _newer_rejections(cand.framework, cand.release.version, rejections)
    if any(r.rule == "platform" and "native Windows" in r.message for r in newer):
        return [
            f"{cand.framework} {cand.release.version} is the last {cand.framework} release with GPU"
            " support on native Windows; newer releases run only on the CPU there (use WSL2 for"
            " newer releases on the GPU)"
        ]
    return []


def _why_not_gpu(framework: str, rejections: list[Rejection], target: Target) -> str:
    if target.gpu is None:
        return "no NVIDIA GPU found"
    gpu_rules = [
        r
        for r in rejections
        if r.framework == framework and r.rule not in ("requirement", "python")
    ]
    if not gpu_rules:
        return f"no {framework} GPU build matches the requirements"
    # The most telling reason: the newest rejected GPU candidate's.
    top = gpu_rules[0]
    return f"{top.label}: {top.message}"


def _fixes(chosen: Sequence[Candidate], rejections: list[Rejection], target: Target) -> list[str]:
    fixes: list[str] = []
    if target.gpu is None or target.no_gpu:
        return fixes
    for cand in chosen:
        newer = _newer_rejections(cand.framework, cand.release.version, rejections)
        by_driver = [r for r in newer if r.rule == "driver" and r.needs_driver]
        if by_driver:
            best = by_driver[0]
            assert best.needs_driver is not None
            need_major = int(best.needs_driver.split(".")[0])
            branch = target.last_driver_branch
            if branch and branch.isdigit() and need_major > int(branch):
                fixes.append(
                    f"{cand.framework}: newer builds need driver ≥ {best.needs_driver}, but"
                    f" {target.generation} GPUs end with driver branch R{branch}; this is the newest"
                    " stack this GPU can run"
                )
            else:
                fixes.append(
                    f"{cand.framework}: install NVIDIA driver ≥ {best.needs_driver} to use {best.label}"
                )
        if any(r.rule == "platform" and "native Windows" in r.message for r in newer) or (
            not cand.build.is_gpu and target.os_family == "windows" and not target.wsl
        ):
            fixes.append(
                f"{cand.framework}: for newer releases on the GPU, use WSL2 (the Linux build runs"
                " there with this Windows driver)"
            )
    return list(dict.fromkeys(fixes))


def _infeasible(
    reqs: Sequence[FrameworkRequirement],
    ranked: Sequence[Sequence[Candidate]],
    rejections: list[Rejection],
    conflicts: list[str],
) -> str:
    lines = []
    for req, cands in zip(reqs, ranked):
        if cands:
            continue
        mine = [r for r in rejections if r.framework == req.framework]
        relevant = [r for r in mine if r.rule != "requirement"] or mine
        if not relevant:
            lines.append(f"{req.text}: no release in the knowledge base")
            continue
        lines.append(
            f"{req.text}: no release runs here; e.g. {relevant[0].label}: {relevant[0].message}"
        )
    if conflicts:
        lines.append("the frameworks cannot share one environment: " + "; ".join(conflicts[:3]))
    return "no stack satisfies the requirements: " + " | ".join(lines)
