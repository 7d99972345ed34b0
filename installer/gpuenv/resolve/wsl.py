"""What WSL2 would give a native-Windows machine: the same request resolved for WSL2, purely.

Native Windows ends TensorFlow's GPU builds at 2.10; WSL2 runs the Linux builds with the Windows
host's driver. Whether that helps depends on this GPU and that driver, so the advice comes from
resolving the request again for WSL2, with the current driver and with the newest driver the
GPU's generation still runs, never from a promise.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Optional

from packaging.version import Version

from gpuenv.machine import (
    Driver,
    Machine,
    OSInfo,
    cc_tuple,
    conda_platform,
    parse_driver_version,
)
from gpuenv.recipes import KnowledgeBase
from gpuenv.resolve.plan import FrameworkChoice, Plan
from gpuenv.resolve.rules import Rejection
from gpuenv.resolve.target import Target

HINT = ": for newer releases on the GPU, use WSL2"  # the generic fix line this advice replaces

# Resolves the request for a machine (with another driver, or None for its own); None when no
# stack fits there.
Resolver = Callable[[Machine, Optional[str]], Optional[tuple[Plan, list[Rejection]]]]


def as_wsl(machine: Machine, driver: Optional[str]) -> Machine:
    """The same computer seen from WSL2: the Linux platform, the Windows host's driver."""
    os_info = OSInfo(family="linux", name="WSL2", wsl=True, windows_build=machine.os.windows_build)
    return dataclasses.replace(
        machine,
        os=os_info,
        platform=conda_platform("linux", machine.arch),
        glibc=None,
        driver=Driver(version=driver) if driver else machine.driver,
    )


def newest_driver(kb: KnowledgeBase, target: Target) -> Optional[str]:
    """The newest Windows driver the knowledge base names that this GPU's generation still runs."""
    known = [t.min_driver_windows for t in kb.toolkits.values()]
    known += [m.min_driver_windows for m in kb.cuda_majors.values()]
    known += [f.min_driver for f in kb.framework_drivers if f.os in ("wsl", "windows")]
    if target.generation_min_driver:
        known.append(target.generation_min_driver)
    if target.driver_text:
        known.append(target.driver_text)
    last = target.last_driver_branch
    if last and last.isdigit():
        known = [k for k in known if target.branch_of(k) <= int(last)]
    return max(known, key=parse_driver_version) if known else None


def advice(
    plan: Plan, target: Target, resolve_for: Resolver, machine: Machine, kb: KnowledgeBase
) -> dict[str, str]:
    """framework -> one line: what WSL2 gives this GPU, and which driver that needs."""
    wanted = [n for n in plan.frameworks if any(f.startswith(n + HINT) for f in plan.fixes)]
    if not wanted:
        return {}
    now = resolve_for(machine, None)
    best_driver = newest_driver(kb, target)
    best = resolve_for(machine, best_driver) if best_driver != target.driver_text else now
    if best is None:
        return {n: f"{n}: WSL2 would not help: no stack fits this GPU there either" for n in wanted}
    caveat = _caveat(kb, target)
    return {
        name: _line(name, plan, now, best[0], best_driver, target)
        + (caveat if best[0].frameworks[name].gpu else "")
        for name in wanted
        if name in best[0].frameworks
    }


def merge(fixes: tuple[str, ...], lines: dict[str, str]) -> tuple[str, ...]:
    out = []
    for fix in fixes:
        name = fix.split(HINT)[0] if HINT in fix else None
        out.append(lines.get(name, fix) if name else fix)
    return tuple(dict.fromkeys(out))


def _caveat(kb: KnowledgeBase, target: Target) -> str:
    """NVIDIA's CUDA on WSL guide: Maxwell runs but is not officially supported; WDDM only."""
    wsl = kb.wsl
    if wsl is None or target.cc is None:
        return ""
    cc = cc_tuple(target.ccs[0] if target.ccs else target.cc)
    unofficial = cc_tuple(wsl.unofficial_from) <= cc < cc_tuple(wsl.min_compute_capability)
    what = (
        f"{target.generation or 'this'} GPUs are 'not officially supported' there; "
        if unofficial
        else ""
    )
    return f" ({what}WSL2 needs the GPU in WDDM mode; NVIDIA's CUDA on WSL guide)"


def _line(
    name: str,
    plan: Plan,
    now: Optional[tuple[Plan, list[Rejection]]],
    best: Plan,
    best_driver: Optional[str],
    target: Target,
) -> str:
    there = best.frameworks[name]
    here = plan.frameworks[name]
    if not there.gpu:
        return f"{name}: WSL2 would not help: no {name} GPU build runs on this GPU there either"
    if here.gpu and Version(there.version) <= Version(here.version):
        return f"{name}: WSL2 gives this GPU nothing newer on the GPU ({_label(name, there)})"
    current = now[0].frameworks.get(name) if now else None
    if (
        current
        and current.gpu
        and (current.version, current.variant) == (there.version, there.variant)
    ):
        return (
            f"{name}: in WSL2, this GPU runs {_label(name, there)} with the current Windows driver"
            f" {target.driver_text}"
        )
    need = _needed_driver(name, there, now[1] if now else []) or best_driver
    with_now = (
        f"; with driver {target.driver_text} it gets {name} {current.version} [{current.variant}]"
        if current and current.gpu
        else f"; driver {target.driver_text} runs no {name} GPU build there"
        if target.driver_text
        else f"; without a driver no {name} GPU build runs there"
    )
    branch = f" (R{target.branch_of(need)})" if need else ""
    return (
        f"{name}: in WSL2, this GPU would run {_label(name, there)} after updating the Windows"
        f" driver to ≥ {need}{branch}{with_now}"
    )


def _needed_driver(
    name: str, choice: FrameworkChoice, rejections: list[Rejection]
) -> Optional[str]:
    """The driver that lifted the WSL2 choice's rejection under the current driver."""
    for r in rejections:
        same = (r.framework, r.version, r.variant) == (name, choice.version, choice.variant)
        if same and r.rule == "driver" and r.needs_driver:
            return r.needs_driver
    return None


def _label(name: str, choice: FrameworkChoice) -> str:
    cuda = f", CUDA {choice.cuda}" if choice.cuda else ""
    return f"{name} {choice.version} [{choice.variant}{cuda}]"
