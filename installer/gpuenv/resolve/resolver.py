"""The resolver: Machine + requirements -> the newest Plan that runs there, or why none does."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Optional

from gpuenv.errors import INFEASIBLE_EXIT, GpuenvError
from gpuenv.machine import Machine
from gpuenv.recipes import KnowledgeBase, load_knowledge_base
from gpuenv.resolve import explain
from gpuenv.resolve.assemble import assemble
from gpuenv.resolve.candidates import candidates, cpu_explains, cpu_fallbacks
from gpuenv.resolve.combine import Conflict, Ranks, best_combination, nvidia_wheels
from gpuenv.resolve.plan import DEFAULT_REQUIREMENTS, Plan
from gpuenv.resolve.ranked import Ranked
from gpuenv.resolve.requirements import (
    FrameworkRequirement,
    RequirementError,
    canonical_name,
    parse_requirements,
)
from gpuenv.resolve.rules import Candidate, Rejection
from gpuenv.resolve.target import Availability, Target, TargetError, build_target


class ResolveError(GpuenvError):
    """No stack satisfies the requirements on this machine (or --require-gpu can't be met)."""

    exit_code = INFEASIBLE_EXIT


def _check_extras(kb: KnowledgeBase, req: FrameworkRequirement) -> None:
    """An extra no recorded build provides is a typing error or a stack gpuenv doesn't plan."""
    if not req.extras:
        return
    known: set[str] = set()
    for release in kb.framework(req.framework).releases:
        for build in release.builds:
            known.add(canonical_name(build.variant))
            if build.extra:
                known.add(canonical_name(build.extra))
    unknown = [e for e in req.extras if e not in known]
    if unknown:
        raise RequirementError(
            f"{req.text!r}: no {req.framework} build in the knowledge base provides the extra"
            f" {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )


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
    every_rejection: bool = True,
) -> Plan:
    """The newest stack that runs on `machine`; `available` (from lock) limits it to what the
    reachable sources publish. The Plan's `rejected` lists every candidate a rule rejected, or,
    with `every_rejection=False`, those the search met: every build better than the chosen ones,
    which is all that the Plan's reasons, warnings and fixes rest on."""
    kb = kb or load_knowledge_base()
    plan, _, target = _resolve(
        machine,
        requirements,
        kb,
        python,
        no_gpu,
        require_gpu,
        gpu_index,
        available,
        every_rejection,
    )
    if target.os_family == "windows" and not target.wsl and target.wants_gpu:
        from gpuenv.resolve import wsl  # native Windows only: every other plan skips its import

        advice = wsl.advice(
            plan,
            target,
            lambda m, driver: _resolve_quietly(
                wsl.as_wsl(m, driver), requirements, kb, python, gpu_index
            ),
            machine,
            kb,
        )
        if advice:
            plan = dataclasses.replace(plan, fixes=wsl.merge(plan.fixes, advice))
    return plan


def _resolve_quietly(
    machine: Machine,
    requirements: Sequence[str],
    kb: KnowledgeBase,
    python: Optional[str],
    gpu_index: Optional[int],
) -> Optional[tuple[Plan, list[Rejection]]]:
    try:
        plan, rejections, _ = _resolve(
            machine, requirements, kb, python, False, False, gpu_index, None, True
        )
    except (ResolveError, TargetError):
        return None
    return plan, rejections


def _resolve(
    machine: Machine,
    requirements: Sequence[str],
    kb: KnowledgeBase,
    python: Optional[str],
    no_gpu: bool,
    require_gpu: bool,
    gpu_index: Optional[int],
    available: Optional[Availability],
    every_rejection: bool,
) -> tuple[Plan, list[Rejection], Target]:
    reqs = parse_requirements(list(requirements) or list(DEFAULT_REQUIREMENTS))
    for req in reqs:
        if req.framework not in kb.frameworks:
            raise RequirementError(f"the knowledge base has no data for {req.framework}")
        _check_extras(kb, req)
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

    asked_cpu = [r for r in reqs if r.cpu_only]
    if require_gpu and asked_cpu:
        raise ResolveError(
            f"--require-gpu: {asked_cpu[0].text!r} asks for the CPU-only build; ask for"
            f" {asked_cpu[0].framework} instead"
        )

    # The search meets every combination with all frameworks on the GPU before any other
    # (combine), so where the CPU candidates explain nothing they are evaluated only when no
    # such combination fits: 243 of the 639 builds `resolve torch tensorflow` weighed on a GPU
    # machine were each release's CPU fallback (1-2 ms). The candidates are evaluated as the
    # search reads them (ranked): it stops at the first combination that agrees.
    later = not any(cpu_explains(target, req) for req in reqs)
    rejected_by: list[list[Rejection]] = [[] for _ in reqs]  # each framework's, newest first
    ranked: list[Ranks] = []
    for req, rejected in zip(reqs, rejected_by):
        ranked.append(Ranked(candidates(kb, target, req, rejected, cpu=not later)))

    chosen, conflicts = best_combination(ranked, kb)
    if chosen is None and later:
        ranked = [_every(r) + cpu_fallbacks(kb, target, req) for r, req in zip(ranked, reqs)]
        chosen, conflicts = best_combination(ranked, kb)
    # evaluated to the end where every rejection is wanted, or needed to say why nothing fits
    drained = [_every(r) for r in ranked] if chosen is None or every_rejection else []
    rejections = [r for rejected in rejected_by for r in rejected]
    if chosen is None:
        raise ResolveError(
            explain.infeasible(reqs, drained, rejections, [c.message for c in conflicts], kb)
        )

    has_gpu = [r[0].on_gpu for r in ranked]
    cpu_because = _kept_off_the_gpu(reqs, chosen, has_gpu, conflicts, require_gpu)
    on_cpu = [c for c in chosen if not c.on_gpu]
    if require_gpu and on_cpu:
        why = "; ".join(explain.why_not_gpu(c.framework, rejections, target) for c in on_cpu)
        raise ResolveError(f"--require-gpu: {why}")
    plan = assemble(kb, machine, target, reqs, chosen, rejections, cpu_because)
    plan = _with_agreement(plan, chosen, kb)
    tops = [r[0] for r in ranked]
    if conflicts and any(c is not top for c, top in zip(chosen, tops)):
        trades = [
            f"Trade-off: {c.label} instead of {top.label}: the newest candidates cannot share"
            f" one environment ({conflicts[0].message})"
            for c, top in zip(chosen, tops)
            if c is not top
        ]
        plan = dataclasses.replace(plan, reasons=(*plan.reasons, *trades))
    return plan, rejections, target


def _kept_off_the_gpu(
    reqs: Sequence[FrameworkRequirement],
    chosen: Sequence[Candidate],
    has_gpu: Sequence[bool],
    conflicts: Sequence[Conflict],
    require_gpu: bool,
) -> dict[str, str]:
    """framework -> why it runs on the CPU although a GPU build of it runs here: no combination
    keeps every framework on the GPU in one environment. Under --require-gpu, or when every
    framework was asked for by version, that is an error naming the clash, not a plan."""
    pushed = [c for c, gpu in zip(chosen, has_gpu) if not c.on_gpu and gpu and conflicts]
    if not pushed:
        return {}
    clash = conflicts[0].message
    names = " and ".join(r.framework for r in reqs)
    split = " ".join(r.text if " " not in r.text else repr(r.text) for r in reqs)
    alternatives = (
        f"an older release of one of them, or one environment per framework (`gpuenv setup"
        f" --split {split}`: each its own environment, kernel and `gpuenv run -n NAME`)"
    )
    if require_gpu or all(str(r.specifier) for r in reqs):
        asked = " and ".join(repr(r.text) for r in reqs)
        flag = "--require-gpu: " if require_gpu else ""
        raise ResolveError(
            f"{flag}{asked} cannot share one environment with each on the GPU: {clash}."
            f" Choose {alternatives}."
        )
    why = (
        f"no combination keeps {names} all on the GPU in one environment ({clash});"
        f" for the GPU, choose {alternatives}"
    )
    return {c.framework: why for c in pushed}


def nvidia_by_framework(chosen: Sequence[Candidate], kb: KnowledgeBase) -> dict[str, list[str]]:
    """framework -> the NVIDIA wheel requirements it brings (recorded, or assumed by kind)."""
    return {c.framework: list(nvidia_wheels(c, kb)) for c in chosen if nvidia_wheels(c, kb)}


def _with_agreement(plan: Plan, chosen: Sequence[Candidate], kb: KnowledgeBase) -> Plan:
    """Say how the frameworks that take NVIDIA's wheels agree, and what of that is assumed."""
    brings = nvidia_by_framework(chosen, kb)
    reasons, warnings = list(plan.reasons), list(plan.warnings)
    if len(brings) > 1:
        reasons.append(
            f"One environment: {', '.join(sorted(brings))} take CUDA libraries from NVIDIA's"
            " wheels; their requirements admit one version of each package and no two packages"
            " of one library (recipes/nvidia.toml); the lock checks the wheels' own file lists"
        )
    for cand in chosen:
        if cand.framework in brings and not cand.pip_libs:
            warnings.append(
                f"{cand.label}: its NVIDIA wheel pins are not recorded; it is taken to use"
                f" {', '.join(brings[cand.framework])} (recipes/nvidia.toml [[unpinned]], not"
                " verified)"
            )
    return dataclasses.replace(plan, reasons=tuple(reasons), warnings=tuple(warnings))


def _every(ranked: Ranks) -> list[Candidate]:
    """All of a framework's candidates, a Ranked one's evaluated to the end."""
    return ranked.drain() if isinstance(ranked, Ranked) else list(ranked)
