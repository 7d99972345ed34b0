"""Turning the chosen candidates into a Plan: pins, indexes, Python, explanations."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Optional

from gpuenv.machine import Machine
from gpuenv.recipes import PLATFORM_PROJECT, KnowledgeBase
from gpuenv.resolve import explain
from gpuenv.resolve.combine import common_pythons, nvidia_wheels
from gpuenv.resolve.plan import FrameworkChoice, PipRequirement, Plan, RejectedCandidate
from gpuenv.resolve.requirements import FrameworkRequirement, retired_name_warning
from gpuenv.resolve.rules import (
    Candidate,
    Rejection,
    build_package,
    labelled_project,
    published_version,
)
from gpuenv.resolve.target import Target

EXCLUDE_NEWER_GRACE_DAYS = 30


def assemble(
    kb: KnowledgeBase,
    machine: Machine,
    target: Target,
    reqs: Sequence[FrameworkRequirement],
    chosen: Sequence[Candidate],
    rejections: list[Rejection],
    cpu_because: Optional[Mapping[str, str]] = None,
) -> Plan:
    """The Plan of the chosen candidates; `cpu_because`: framework -> why it runs on the CPU
    when a GPU build of it exists but cannot share the environment with the others."""
    pythons = common_pythons(chosen)
    python = pythons[-1]
    frameworks: dict[str, FrameworkChoice] = {}
    pip: list[PipRequirement] = []
    conda: list[str] = []
    companions: list[str] = []
    constraints: list[str] = []
    warnings: list[str] = [*target.gpu_warnings, *explain.driver_warnings(target)]
    reasons: list[str] = [explain.machine_reason(machine, target)]
    sources: list[str] = []
    for req, cand in zip(reqs, chosen):
        release, build = cand.release, cand.build
        frameworks[req.framework] = FrameworkChoice(
            name=req.framework,
            version=release.version,
            variant=build.variant,
            # a CUDA build run on the CPU uses no CUDA: the plan says so (null)
            cuda=build.cuda if cand.on_gpu else None,
            cudnn=build.cudnn if cand.on_gpu else None,
            package=build.package or release.package or req.framework,
            released=release.released.isoformat() if release.released else None,
            gpu=cand.on_gpu,
            related=dict(release.related),
            nvidia=nvidia_wheels(cand, kb),
        )
        pip.extend(_pip_requirements(req, cand, target))
        if not cand.extra and not build.pip_libs_declared:
            # libraries the wheel does not require, that its install page does: pinned here
            pip.extend(PipRequirement(lib, None) for lib in cand.pip_libs)
        conda.extend(cand.conda_libs)
        reasons.extend(_cudnn_installed(cand))
        companions.extend(cand.companions)
        constraints.extend(cand.constraints)
        warnings.extend(cand.warnings)
        warnings.extend(_unverified(cand))
        reasons.append(explain.choice_reason(req, cand, rejections, target))
        reasons.extend(cand.constraint_reasons)
        sources.append(explain.choice_sources(cand))
        reasons.extend(explain.windows_last_gpu_reason(kb, cand, rejections, target))
        package = build.package or release.package or req.framework
        warnings.extend(
            retired_name_warning(n, package, release.version, cand.on_gpu)
            for n in req.retired_names
        )
        if req.cpu_only:
            reasons.append(
                f"{req.framework}: {', '.join(n for n in req.names if n != req.framework)} asks"
                " for the CPU-only build"
            )
        elif target.wants_gpu and not cand.on_gpu:
            because = (cpu_because or {}).get(req.framework)
            warnings.append(
                f"{req.framework} {release.version} will run on the CPU: "
                + (because or explain.why_not_gpu(req.framework, rejections, target))
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
    if target.wsl and kb.wsl and any(c.on_gpu for c in chosen):
        reasons.append(
            f"WSL2: CUDA there runs on the Windows host's driver (≥ {kb.wsl.min_driver_windows})"
            " with the GPU in WDDM mode, not TCC (source:"
            f" {kb.wsl.provenance.source.split(' ')[0]})"
        )
    if len(chosen) > 1 or target.python:
        span = ", ".join(
            f"{c.framework} {c.release.version} ({explain.span(c.pythons)})" for c in chosen
        )
        reasons.append(
            f"Python {python}: the newest version that all of them publish for {target.platform}: {span}"
        )
    else:
        reasons.append(
            f"Python {python}: the newest {chosen[0].framework} {chosen[0].release.version} publishes for {target.platform}"
        )
    cutoff = _exclude_newer(kb, chosen)
    exempt = tuple(dict.fromkeys(p for c in chosen for p in c.release.cutoff_exempt))
    if cutoff and exempt:
        reasons.append(
            f"{', '.join(exempt)}: locked without the {cutoff} cut-off that holds for the rest of"
            " the stack: no wheel of it met the release's requirement by then (recipes/, the"
            " release's cutoff_exempt)"
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
        exclude_newer=cutoff,
        exclude_newer_exempt=exempt if cutoff else (),
        warnings=tuple(dict.fromkeys(warnings)),
        reasons=tuple(reasons),
        fixes=tuple(explain.fixes(chosen, rejections, target)),
        rejected=tuple(
            RejectedCandidate(r.label, r.rule, r.message, r.source, r.caveat) for r in rejections
        ),
        knowledge_base=kb.digest[:16],
        sources=tuple(sources),
    )


def _exclude_newer(kb: KnowledgeBase, chosen: Sequence[Candidate]) -> Optional[str]:
    """An old stack's dependencies are locked as of its era: the newest chosen release's date
    plus a grace period for its companions' patch releases. A stack with a current release
    gets no cut-off: current releases want current dependencies."""
    for c in chosen:  # only the chosen frameworks' tables: the others stay unpickled
        releases = kb.frameworks[c.framework].releases
        if releases and c.release.version == releases[0].version:
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
    package = build_package(release, build)
    labelled = labelled_project(release, build)
    version = published_version(release, build, target.platform)
    base = release.version if labelled == package else release.related[labelled]
    local = version[len(base) :]
    index = build.index if local else None
    if index and target.available is not None:
        sources = target.available.versions.get(labelled, {}).get(version, ())
        if sources and not any(s.startswith(index) for s in sources):
            index = None
    extra = f"[{cand.extra}]" if cand.extra else ""
    if labelled == package:
        out = [PipRequirement(f"{package}{extra}=={version}", index)]
    else:
        # jax is pure Python and unlabelled; the labelled jaxlib comes from the build's index
        out = [PipRequirement(f"{package}{extra}=={release.version}", None)]
    companion = PLATFORM_PROJECT.get(req.framework)
    if companion and companion in release.related:
        pin = version if labelled == companion else release.related[companion]
        out.append(PipRequirement(f"{companion}=={pin}", index if labelled == companion else None))
    for project in req.with_projects:
        if project == companion:
            continue  # pinned with every release above
        related = release.related.get(project)
        # rules.evaluate rejected every release without it: a requested package is never dropped
        assert related is not None, f"{project} has no release recorded for {release.version}"
        out.append(PipRequirement(f"{project}=={related}{local}", index))
    return out


def _accelerator(target: Target, chosen: Sequence[Candidate]) -> str:
    if any(c.on_gpu for c in chosen):
        return "cuda"
    if target.platform == "osx-arm64" and any(c.framework == "torch" for c in chosen):
        return "mps"
    return "cpu"


def _unverified(cand: Candidate) -> list[str]:
    """Say when a choice rests on knowledge-base rows nobody could check against their source."""
    rows = [("release", cand.release.provenance), ("build", cand.build.provenance)]
    if cand.on_gpu and cand.build.archs:
        rows.append(("architecture list", cand.build.archs.provenance))
    doubtful = [what for what, p in rows if not p.verified]
    if not doubtful:
        return []
    return [
        f"{cand.label}: the knowledge base's {' and '.join(doubtful)} data for it is not verified"
        " against a primary source (see recipes/; `gpuenv recipes check --online` compares"
        " what it can)"
    ]


def _cudnn_installed(cand: Candidate) -> list[str]:
    """When the cuDNN an environment gets differs from the one the build was made with (the
    plan's header shows the latter), the reason line that says which it gets and why."""
    import re

    build = cand.build
    if not (cand.on_gpu and build.cudnn):
        return []
    for spec in (*cand.conda_libs, *cand.pip_libs):
        found = re.fullmatch(r"(?:cudnn=|nvidia-cudnn-cu\d+==)(\d+\.\d+)[.\d]*", spec)
        if found and found[1] != build.cudnn:
            return [
                f"cuDNN {found[1]} for {cand.label}: built with cuDNN {build.cudnn}, which later"
                f" minor releases of cuDNN {build.cudnn.split('.')[0]} still run (NVIDIA cuDNN"
                " Developer Guide, API compatibility: from cuDNN 7 on, a minor release is"
                f" backward compatible); {found[1]} is the one its release's install"
                f" instructions name ({spec}; see the build row's source)"
            ]
    return []
