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
    """What changed between the plan the lockfile was made for and today's, causes first."""
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
    if old.knowledge_base and old.knowledge_base != plan.knowledge_base:
        out.append(f"knowledge base {old.knowledge_base} -> {plan.knowledge_base}")
    python, labels = planned_at_lock(locked)
    new = _labels(plan)
    stacks = [
        f"{name} {labels.get(name, 'absent')} -> {new.get(name, 'absent')}"
        for name in sorted(set(labels) | set(new))
        if labels.get(name, "absent") != new.get(name, "absent")
    ]
    if not stacks and not locked.fallback:
        # the same builds: what else the plan installs (a lab's extra packages) is the cause;
        # with other builds or a fallback, the framework pins differ anyway and say it
        old_pip = {p.requirement for p in old.pip}
        new_pip = {p.requirement for p in plan.pip}
        if old_pip != new_pip:
            gone, added = sorted(old_pip - new_pip), sorted(new_pip - old_pip)
            out.append(
                "pip requirements "
                + ", ".join([*(f"-{r}" for r in gone), *(f"+{r}" for r in added)])
            )
    if python != plan.python:
        out.append(f"Python {python} -> {plan.python}")
    out += stacks
    pins_fell_back = "companion pins changed" in locked.fallback
    if not pins_fell_back and (
        old.companions != plan.companions or old.constraints != plan.constraints
    ):
        out.append("companion pins changed")
    return out
