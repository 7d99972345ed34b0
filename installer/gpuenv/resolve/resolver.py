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
from gpuenv.resolve.candidates import candidates
from gpuenv.resolve.combine import best_combination
from gpuenv.resolve.plan import DEFAULT_REQUIREMENTS, Plan
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
) -> Plan:
    """The newest stack that runs on `machine`; `available` (from lock) limits it to what the
    reachable sources publish."""
    kb = kb or load_knowledge_base()
    plan, _, target = _resolve(
        machine, requirements, kb, python, no_gpu, require_gpu, gpu_index, available
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
            machine, requirements, kb, python, False, False, gpu_index, None
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

    ranked: list[list[Candidate]] = []
    gpu_counts: list[int] = []
    rejections: list[Rejection] = []
    for req in reqs:
        gpu, cpu, rejected = candidates(kb, target, req)
        rejections.extend(rejected)
        ranked.append(gpu + cpu)
        gpu_counts.append(len(gpu))

    chosen, conflicts = best_combination(ranked, gpu_counts)
    if chosen is None:
        raise ResolveError(
            explain.infeasible(reqs, ranked, rejections, [c.message for c in conflicts])
        )

    on_cpu = [c for c in chosen if not c.on_gpu]
    if require_gpu and on_cpu:
        why = "; ".join(explain.why_not_gpu(c.framework, rejections, target) for c in on_cpu)
        raise ResolveError(f"--require-gpu: {why}")
    plan = assemble(kb, machine, target, reqs, chosen, rejections)
    tops = [r[0] for r in ranked]
    if conflicts and any(c is not top for c, top in zip(chosen, tops)):
        newest = ", ".join(t.label for t in tops)
        trade = (
            f"Trade-off: the newest candidates ({newest}) cannot share one environment"
            f" ({conflicts[0].message}); this is the newest combination that can"
        )
        plan = dataclasses.replace(plan, reasons=(*plan.reasons, trade))
    return plan, rejections, target
