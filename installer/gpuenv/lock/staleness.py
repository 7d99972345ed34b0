"""Why a lockfile is stale, said as the cause that changed (`lock --check`).

A lockfile may hold a fallback: the stack the reachable sources allowed, not the one planned
(`gpuenv.fallback`, "torch 2.7.1 [cu118] -> 2.15.0 [cpu]"). Comparing today's plan with that
stack would report the old fallback as the change; so the planned stack is recovered from the
record first, and the inputs that lead to a plan (the machine's driver and GPU, the knowledge
base, the pip requirements) are named before the stacks that follow from them.
"""

from __future__ import annotations

import re

from gpuenv.lock.model import LockedEnvironment
from gpuenv.resolve.plan import Plan

_FRAMEWORK = re.compile(r"(?P<name>\S+) (?P<before>absent|\S+ \[[^\]]+\]) -> (?P<after>.+)")
_PYTHON = re.compile(r"Python (?P<before>\S+) -> (?P<after>\S+)")


def _labels(plan: Plan) -> dict[str, str]:
    return {n: f"{f.version} [{f.variant}]" for n, f in plan.frameworks.items()}


def planned_at_lock(locked: LockedEnvironment) -> tuple[str, dict[str, str]]:
    """The Python and framework builds the lockfile's plan had before any fallback."""
    python, labels = locked.plan.python, _labels(locked.plan)
    for part in filter(None, (p.strip() for p in locked.fallback.split(";"))):
        found = _PYTHON.fullmatch(part)
        if found:
            python = found["before"]
            continue
        found = _FRAMEWORK.fullmatch(part)
        if found is None:
            continue
        if found["before"] == "absent":
            labels.pop(found["name"], None)
        else:
            labels[found["name"]] = found["before"]
    return python, labels


def stale_causes(locked: LockedEnvironment, plan: Plan) -> list[str]:
    """What changed between the plan the lockfile was made for and today's, causes first.

    The builds count as changed only when today's differ from both the ones planned at lock
    time and the ones locked (a lockfile that fell back to what is planned today is not stale
    for its builds); the knowledge base is named only beside such a change (a new knowledge
    base that plans the same stack changes nothing); the extra packages (a lab's `packages`,
    the ipykernel `jupyter = true` adds) are compared whatever else changed."""
    old = locked.plan
    out = []
    if old.driver != plan.driver:
        out.append(f"driver {old.driver or 'none'} -> {plan.driver or 'none'}")
    old_gpu = (old.gpu or {}).get("compute_capability")
    new_gpu = (plan.gpu or {}).get("compute_capability")
    if old_gpu != new_gpu:
        out.append(f"GPU compute capability {old_gpu or 'none'} -> {new_gpu or 'none'}")
    if old.platform != plan.platform:
        out.append(f"platform {old.platform} -> {plan.platform}")
    python, labels = planned_at_lock(locked)
    new = _labels(plan)
    stacks = []
    if new != _labels(old):
        stacks = [
            f"{name} {labels.get(name, 'absent')} -> {new.get(name, 'absent')}"
            for name in sorted(set(labels) | set(new))
            if labels.get(name, "absent") != new.get(name, "absent")
        ]
    if stacks and old.knowledge_base and old.knowledge_base != plan.knowledge_base:
        out.append(f"knowledge base {old.knowledge_base} -> {plan.knowledge_base}")
    extras = _extra_packages(old, plan)
    if extras:
        out.append(f"packages {extras}")
    if python not in (plan.python, old.python):
        out.append(f"Python {python} -> {plan.python}")
    out += stacks
    pins_fell_back = "companion pins changed" in locked.fallback
    if not pins_fell_back and (
        old.companions != plan.companions or old.constraints != plan.constraints
    ):
        out.append("companion pins changed")
    return out


def _extra_packages(old: Plan, new: Plan) -> str:
    """The packages locked beside the frameworks that were added (+) or dropped (-): those of
    the pip part that name no framework of either plan."""
    from packaging.requirements import InvalidRequirement
    from packaging.utils import canonicalize_name

    from gpuenv.resolve.packages import project_name

    frameworks = {canonicalize_name(n) for n in (*old.frameworks, *new.frameworks)}

    def extras(plan: Plan) -> set[str]:
        out = set()
        for pip in plan.pip:
            try:
                name = project_name(pip.requirement)
            except InvalidRequirement:
                continue
            if name not in frameworks:
                out.add(pip.requirement)
        return out

    before, after = extras(old), extras(new)
    return ", ".join(
        [*(f"-{r}" for r in sorted(before - after)), *(f"+{r}" for r in sorted(after - before))]
    )
