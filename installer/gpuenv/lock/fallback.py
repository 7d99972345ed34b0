"""What a lock may fall back to when the planned build cannot be had, and how that is said.

The plan `gpuenv resolve` prints (the ideal) assumes every source answers. When one does not,
or lacks a file, the lock falls back to what the others publish. A fallback that keeps the GPU
(an older CUDA build that runs here) is allowed by default and printed; one that trades the GPU
for the CPU is refused (exit 5) unless the user (`--allow-cpu-fallback`) or the lab class
(`fallback = "cpu"`) accepts it: a silent CPU stack is worse than an error, nobody looks until
training is slow.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

from gpuenv.lock.errors import SourceUnreachableError
from gpuenv.resolve.plan import FrameworkChoice, Plan

# What a lock accepts: no fallback at all; fallbacks that keep the GPU; any fallback.
FALLBACK_POLICIES = ("none", "gpu", "cpu")
DEFAULT_POLICY = "gpu"


def policy_for(allow_cpu_fallback: bool) -> str:
    """The policy of a command line: the default, or any fallback with --allow-cpu-fallback."""
    return "cpu" if allow_cpu_fallback else DEFAULT_POLICY


class FallbackRefusedError(SourceUnreachableError):
    """The planned build could not be locked and the fallback is not allowed (exit 5)."""


@dataclass(frozen=True)
class Fallback:
    """One framework whose planned build the sources did not give."""

    framework: str
    planned: str  # "torch 2.7.1 [cu118]": the build resolve chose
    got: str  # "torch 2.15.0 [cpu]", or "absent"
    planned_gpu: bool
    got_gpu: bool
    why: str  # why the planned build could not be had, from the sourced resolve

    @property
    def loses_gpu(self) -> bool:
        return self.planned_gpu and not self.got_gpu


def _label(name: str, choice: FrameworkChoice) -> str:
    return f"{name} {choice.version} [{choice.variant}]"


def fallbacks(ideal: Plan, plan: Plan) -> list[Fallback]:
    """Each framework whose build differs from the ideal plan's, with why."""
    out = []
    for name, want in ideal.frameworks.items():
        got = plan.frameworks.get(name)
        planned = _label(name, want)
        if got is not None and _label(name, got) == planned:
            continue
        # a build the sources did not publish is rejected as `unavailable` with what was
        # looked for; one that is not rejected at all lost to the combination of frameworks
        why = next(
            (r.message for r in plan.rejected if r.candidate == planned),
            _not_rejected(name, ideal, plan),
        )
        out.append(
            Fallback(
                framework=name,
                planned=planned,
                got=_label(name, got) if got else "absent",
                planned_gpu=want.gpu,
                got_gpu=bool(got and got.gpu),
                why=why,
            )
        )
    return out


def _not_rejected(name: str, ideal: Plan, plan: Plan) -> str:
    """Why a build no rule rejected was not planned: it does not agree with what the sources
    gave the other frameworks (their NVIDIA wheels, their Python)."""
    others = [
        _label(n, c)
        for n, c in plan.frameworks.items()
        if n != name
        and (n not in ideal.frameworks or _label(n, ideal.frameworks[n]) != _label(n, c))
    ]
    if others:
        return (
            f"it does not agree with {', '.join(others)}, which the reachable sources gave the"
            " other frameworks (see the plan's trade-off lines)"
        )
    if ideal.python != plan.python:
        return f"it does not agree with Python {plan.python}, which the other builds need"
    return "it does not agree with the other frameworks' builds (see the plan's trade-off lines)"


def describe(fb: Fallback, *, refused: bool = False) -> str:
    """One line for people: what was lost, why, and what is locked instead (or, `refused`,
    what the lock would have fallen back to)."""
    if fb.loses_gpu:
        instead = f"{fb.got}, on the CPU"
    elif fb.planned_gpu:
        instead = f"{fb.got}, which runs on this GPU too"
    else:
        instead = fb.got
    then = "the lock would fall back to" if refused else "locking"
    return f"{fb.planned} (the planned build) cannot be locked: {fb.why}; {then} {instead}"


def check_fallback(ideal: Plan, plan: Plan, policy: str, *, cpu_flag: str) -> list[str]:
    """The fallback lines to print, or FallbackRefusedError when `policy` refuses them.
    `cpu_flag`: how this caller's user accepts a CPU fallback (`--allow-cpu-fallback`)."""
    found = fallbacks(ideal, plan)
    lines = [describe(fb) for fb in found]
    if not found and ideal.python != plan.python:  # the same builds for another Python
        lines = [f"Python {ideal.python} (planned) cannot be locked; locking Python {plan.python}"]
    if not lines:
        return []
    if policy == "none":
        why = [describe(fb, refused=True) for fb in found] or lines
        allow = 'allow it (fallback = "gpu" or "cpu" in the lab class)'
        raise FallbackRefusedError("; ".join(why) + _how_to_proceed(allow))
    lost = [describe(fb, refused=True) for fb in found if fb.loses_gpu]
    if lost and policy != "cpu":
        raise FallbackRefusedError(
            "; ".join(lost) + _how_to_proceed(f"accept the CPU stack ({cpu_flag})")
        )
    return lines


def _how_to_proceed(allow: str) -> str:
    return (
        ". The lock stops rather than write a stack worse than the plan. To proceed: reach the"
        " index through a mirror (in your pip or uv settings: PIP_EXTRA_INDEX_URL, UV_INDEX,"
        " pip.conf or uv.toml; `gpuenv lock` also takes --index URL), lock on a machine that"
        f" reaches it, or {allow}"
    )


def with_fallback_warnings(ideal: Plan, plan: Plan) -> Plan:
    """`plan` whose "will run on the CPU" warnings name the build that was lost: the one the
    resolver chose (resolve, limited to the sources, only sees the newest build it could not
    have, which may be one it would have rejected anyway)."""
    warnings = list(plan.warnings)
    for fb in fallbacks(ideal, plan):
        got = plan.frameworks.get(fb.framework)
        if not fb.loses_gpu or got is None:
            continue
        prefix = f"{fb.framework} {got.version} will run on the CPU: "
        warnings = [w for w in warnings if not w.startswith(prefix)]
        warnings.append(prefix + describe(fb))
    return dataclasses.replace(plan, warnings=tuple(warnings))


def refused_fallback(ideal: Plan, locked: Plan, policy: str) -> Optional[str]:
    """Why a lockfile holding `locked` breaks `policy` against the plan it was made for (its
    inputs unchanged: `--check` would otherwise call it up to date), or None."""
    found = fallbacks(ideal, locked)
    if policy == "none" and (found or ideal.python != locked.python):
        shown = ", ".join(f"{fb.got} instead of {fb.planned}" for fb in found)
        return f'it holds a fallback ({shown or "Python " + locked.python}), and fallback = "none"'
    lost = [fb for fb in found if fb.loses_gpu]
    if policy != "cpu" and (lost or (ideal.accelerator != locked.accelerator and not found)):
        shown = ", ".join(f"{fb.got} instead of {fb.planned}" for fb in lost)
        return (
            f"it runs on {locked.accelerator}, its plan on {ideal.accelerator}"
            + (f" ({shown})" if shown else "")
            + "; lock it where the framework index is reachable, or accept the CPU stack"
            ' (fallback = "cpu" in the lab class, or --allow-cpu-fallback)'
        )
    return None
