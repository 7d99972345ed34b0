"""resolve: Machine + requirements -> Plan. Pure: no I/O beyond reading the knowledge base.

plan = resolve(machine, ["tensorflow", "torch"])
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import Counter
from collections.abc import Sequence
from typing import Optional

from packaging.version import Version

from gpuenv.machine import Machine
from gpuenv.recipes import Build, KnowledgeBase, Release, load_knowledge_base
from gpuenv.resolve.combine import best_combination, common_pythons
from gpuenv.resolve.plan import FrameworkChoice, PipRequirement, Plan, RejectedCandidate
from gpuenv.resolve.requirements import FrameworkRequirement, RequirementError, parse_requirements
from gpuenv.resolve.rules import (
    Candidate,
    Rejection,
    build_package,
    evaluate,
    published_version,
)
from gpuenv.resolve.target import Availability, Target, TargetError, build_target

__all__ = ["Availability", "Plan", "RequirementError", "ResolveError", "TargetError", "resolve"]

DEFAULT_REQUIREMENTS = ("torch",)
EXCLUDE_NEWER_GRACE_DAYS = 30


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
    available: Optional[Availability] = None,
) -> Plan:
    """The newest stack that runs on `machine`; `available` (from lock) limits it to what the
    reachable sources publish."""
    kb = kb or load_knowledge_base()
    reqs = parse_requirements(list(requirements) or list(DEFAULT_REQUIREMENTS))
    for req in reqs:
        if req.framework not in kb.frameworks:
            raise RequirementError(f"the knowledge base has no data for {req.framework}")
    target = build_target(
        machine,
        kb,
        python=python,
        no_gpu=no_gpu,
        require_gpu=require_gpu,
        gpu_index=gpu_index,
        available=available,
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

    on_cpu = [c for c in chosen if not c.on_gpu]
    if require_gpu and on_cpu:
        why = "; ".join(_why_not_gpu(c.framework, rejections, target) for c in on_cpu)
        raise ResolveError(f"--require-gpu: {why}")
    plan = _plan(kb, machine, target, reqs, chosen, rejections)
    tops = [r[0] for r in ranked]
    if conflicts and any(c is not top for c, top in zip(chosen, tops)):
        newest = ", ".join(t.label for t in tops)
        trade = (
            f"Trade-off: the newest candidates ({newest}) cannot share one environment"
            f" ({conflicts[0].message}); this is the newest combination that can"
        )
        plan = dataclasses.replace(plan, reasons=(*plan.reasons, trade))
    return plan


def _candidates(
    kb: KnowledgeBase, target: Target, req: FrameworkRequirement
) -> tuple[list[Candidate], list[Candidate], list[Rejection]]:
    """GPU candidates (newest release first, newest CUDA first), then one CPU candidate per
    release (newest first), then CUDA builds that would run on the CPU dragging gigabytes of
    CUDA libraries along (a last resort), and every rejection."""
    gpu: list[Candidate] = []
    cpu: list[Candidate] = []
    heavy: list[Candidate] = []
    rejected: list[Rejection] = []
    for release in kb.framework(req.framework).releases:  # newest first
        if target.wants_gpu:
            for build in sorted(
                (b for b in release.builds if b.is_gpu), key=_cuda_order, reverse=True
            ):
                outcome = evaluate(kb, target, req, release, build)
                if isinstance(outcome, Rejection):
                    rejected.append(outcome)
                else:
                    gpu.append(outcome)
        for build in _cpu_options(release, target.platform):
            outcome = evaluate(kb, target, req, release, build, on_cpu=build.is_gpu)
            if isinstance(outcome, Candidate):
                (heavy if _is_heavy_on_cpu(build) else cpu).append(outcome)
                break
            # a GPU machine's CPU fallbacks, or builds for other platforms, explain nothing
            if not target.wants_gpu and outcome.rule != "platform":
                rejected.append(outcome)
    return gpu, cpu + heavy, rejected


def _is_heavy_on_cpu(build: Build) -> bool:
    return build.is_gpu and bool(build.pip_libs) and not build.extra


def _cpu_options(release: Release, platform: str) -> list[Build]:
    """Builds that can run a release on the CPU, best first: the release's own CPU build; its
    default-index CUDA build when that brings no CUDA libraries of its own (TensorFlow's plain
    wheel); a CPU-only package (tensorflow-cpu); a CUDA build that does (torch on Linux)."""
    main = release.package or release.framework

    def rank(build: Build) -> int:
        if not build.is_gpu:
            return 0 if (build.package or main) == main else 2
        return 3 if _is_heavy_on_cpu(build) else 1

    usable = [
        b
        for b in release.builds
        if not b.is_gpu or platform in b.pypi_default or platform not in b.platforms
    ]
    return sorted(usable, key=rank)


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
    constraints: list[str] = []
    warnings: list[str] = _driver_warnings(target)
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
            gpu=cand.on_gpu,
            related=dict(release.related),
        )
        pip.extend(_pip_requirements(req, cand, target))
        conda.extend(cand.conda_libs)
        companions.extend(cand.companions)
        constraints.extend(cand.constraints)
        warnings.extend(cand.warnings)
        reasons.append(_choice_reason(req, cand, rejections, target))
        reasons.extend(_windows_last_gpu_reason(kb, cand, rejections, target))
        if target.wants_gpu and not cand.on_gpu:
            warnings.append(
                f"{req.framework} {release.version} will run on the CPU: "
                + _why_not_gpu(req.framework, rejections, target)
            )
        elif target.platform == "osx-arm64" and req.framework == "torch":
            reasons.append(
                f"torch {release.version} runs on the Apple GPU through its MPS backend"
                " (there is no CUDA on macOS)"
            )
        elif not cand.on_gpu and target.gpu is None and not target.no_gpu:
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
    return Plan(
        python=python,
        platform=target.platform,
        accelerator=_accelerator(target, chosen),
        glibc=machine.glibc,
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
        constraints=tuple(dict.fromkeys(constraints)),
        exclude_newer=_exclude_newer(kb, chosen),
        warnings=tuple(dict.fromkeys(warnings)),
        reasons=tuple(reasons),
        fixes=tuple(_fixes(chosen, rejections, target)),
        rejected=tuple(RejectedCandidate(r.label, r.rule, r.message) for r in rejections),
        knowledge_base=kb.digest[:16],
    )


def _exclude_newer(kb: KnowledgeBase, chosen: Sequence[Candidate]) -> Optional[str]:
    """An old stack's dependencies are locked as of its era: the newest chosen release's date
    plus a grace period for its companions' patch releases. A stack with a current release
    gets no cut-off: current releases want current dependencies."""
    newest = {name: fw.releases[0].version for name, fw in kb.frameworks.items() if fw.releases}
    if any(c.release.version == newest.get(c.framework) for c in chosen):
        return None
    dates = [c.release.released for c in chosen if c.release.released]
    if not dates:
        return None
    return (max(dates) + dt.timedelta(days=EXCLUDE_NEWER_GRACE_DAYS)).isoformat()


def _pip_requirements(
    req: FrameworkRequirement, cand: Candidate, target: Target
) -> list[PipRequirement]:
    """Pins for the build, routed to the index that publishes it, unless (when the lock looked)
    only the user's own sources (a mirror, a wheelhouse) have it."""
    release, build = cand.release, cand.build
    version = published_version(release, build, target.platform)
    on_default_index = version == release.version
    package = build_package(release, build)
    index = None if on_default_index else build.index
    if index and target.available is not None:
        sources = target.available.versions.get(package, {}).get(version, ())
        if sources and not any(s.startswith(index) for s in sources):
            index = None
    local = version[len(release.version) :]
    extra = f"[{cand.extra}]" if cand.extra else ""
    out = [PipRequirement(f"{package}{extra}=={version}", index)]
    if req.framework == "jax" and "jaxlib" in release.related:
        out.append(PipRequirement(f"jaxlib=={release.related['jaxlib']}", None))
    for project in req.with_projects:
        related = release.related.get(project)
        if related:
            out.append(PipRequirement(f"{project}=={related}{local}", index))
    return out


def _accelerator(target: Target, chosen: Sequence[Candidate]) -> str:
    if any(c.on_gpu for c in chosen):
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


def _driver_warnings(target: Target) -> list[str]:
    branch = target.last_driver_branch
    if not (target.wants_gpu and target.driver and branch and branch.isdigit()):
        return []
    if target.driver[0] <= int(branch):
        return []
    return [
        f"driver {target.driver_text} is newer than R{branch}, the last driver branch that supports"
        f" {target.generation} GPUs: {target.describe_gpu()} cannot run with it; the plan assumes a"
        f" driver of the R{branch} branch would be installed"
    ]


def _choice_reason(
    req: FrameworkRequirement, cand: Candidate, rejections: list[Rejection], target: Target
) -> str:
    release, build = cand.release, cand.build
    label = f"{release.framework} {release.version} [{build.variant}]"
    if cand.on_gpu:
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
        top = _most_telling(newer)
        what += f"; newer: {top.label} rejected ({top.rule}: {top.message})"
        if len(newer) > 1:
            counts = Counter(r.rule for r in newer)
            tally = ", ".join(f"{n} {rule}" for rule, n in counts.most_common())
            what += (
                f"; {len(newer)} newer candidates rejected in all ({tally}; see `gpuenv explain`)"
            )
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
    if not (cand.on_gpu and target.os_family == "windows" and not target.wsl):
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
    top = _most_telling(gpu_rules)
    return f"{top.label}: {top.message}"


def _most_telling(rejections: list[Rejection]) -> Rejection:
    """The newest rejection that says more than "not published for this platform"."""
    return next((r for r in rejections if r.rule != "platform"), rejections[0])


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
            not cand.on_gpu and target.os_family == "windows" and not target.wsl
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
