"""What a plan for a described machine assumed, said aloud (issue 18: never silently worse).

A machine described by flags (`--gpu 940M --os windows`) lacks what only the machine knows:
its driver, the Python it will run, its glibc. resolve fills them in (the newest driver the
GPU's generation runs, the newest Python the stack publishes); a laptop on an older driver
then gets a plan it cannot run, and nobody said so. Each assumption becomes one line for
stderr and one key for `--json` ("assumed": {"driver": "576.02"}).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from gpuenv.machine import Machine, l4t_release, parse_driver_version
from gpuenv.recipes import KnowledgeBase
from gpuenv.resolve.plan import Plan


@dataclass(frozen=True)
class Assumed:
    """One thing a plan for a described machine took for granted, and the line that says so."""

    fact: str  # driver | python | glibc
    value: str
    line: str  # for people, on stderr


def plan_min_driver(kb: KnowledgeBase, plan: Plan, *, wsl: bool = False) -> Optional[str]:
    """The oldest driver this plan's GPU builds run with: CUDA's minor-version compatibility
    floor of each build's major, a framework's own documented floor, and the GPU generation's
    first driver, whichever is newest. `wsl`: WSL2 runs the Windows host's driver."""
    driver_os = "windows" if plan.platform.startswith("win") or wsl else "linux"
    framework_os = "wsl" if wsl else driver_os
    floors: list[str] = []
    for name, fw in plan.frameworks.items():
        if not (fw.gpu and fw.cuda):
            continue
        major = kb.cuda_majors.get(int(fw.cuda.split(".")[0]))
        if major is not None:
            floors.append(str(getattr(major, f"min_driver_{driver_os}")))
        documented = kb.framework_driver(name, framework_os, fw.cuda)
        if documented is not None:
            floors.append(documented.min_driver)
    cc = (plan.gpu or {}).get("compute_capability")
    gen = kb.generation_for(cc) if floors and isinstance(cc, str) else None
    if gen is not None and gen.min_driver(driver_os):
        floors.append(str(gen.min_driver(driver_os)))
    return max(floors, key=parse_driver_version) if floors else None


def assumptions(
    kb: KnowledgeBase,
    machine: Machine,
    plan: Plan,
    *,
    driver_assumed: bool,
    python_assumed: bool,
    glibc_floor: Optional[str] = None,
    os_assumed: bool = False,
    arch_assumed: bool = False,
) -> list[Assumed]:
    """The facts the plan assumed, each once. `driver_assumed`: the machine was described
    without --driver (describe_machine filled one in); `python_assumed`: described, without
    --python; `glibc_floor`: the glibc a lock assumes for a Linux machine whose own is not
    known (gpuenv.lock.targets.DEFAULT_GLIBC)."""
    out: list[Assumed] = []
    if os_assumed:  # a described GPU's machine is this host's OS unless --os says otherwise
        family = "wsl" if machine.os.wsl else machine.os.family
        out.append(
            Assumed(
                "os",
                family,
                f"no --os given: planned for {family}, this host's OS; pass --os"
                " linux|windows|wsl|macos for the machine you mean",
            )
        )
    if arch_assumed:
        out.append(
            Assumed(
                "arch",
                machine.arch,
                f"no --arch given: planned for {machine.arch}; pass --arch"
                " x86_64|aarch64|arm64 for the machine you mean",
            )
        )
    if driver_assumed and machine.driver is not None:
        note = next((n for n in machine.notes if n.startswith("no --driver given")), "")
        line = note or f"no --driver given: planned for driver {machine.driver.version}"
        # a Jetson's driver is its JetPack release: the desktop floors do not apply there
        jetpack = l4t_release(machine.driver.version) is not None
        need = None if jetpack else plan_min_driver(kb, plan, wsl=machine.os.wsl)
        if jetpack and plan.accelerator != "cpu":
            line += "; this plan's CUDA builds need that JetPack's CUDA (or minor-version compatibility)"
        elif need:
            line += f"; this plan needs driver ≥ {need}"
        elif plan.accelerator == "cpu":
            line += "; this plan runs on the CPU whatever the driver"
        out.append(Assumed("driver", machine.driver.version, line))
    if python_assumed:
        out.append(
            Assumed(
                "python",
                plan.python,
                f"no --python given: planned for Python {plan.python}, the newest the stack"
                f" publishes for {plan.platform}; pass --python X.Y for the one that machine runs",
            )
        )
    if glibc_floor and plan.platform.startswith("linux") and machine.glibc is None:
        out.append(
            Assumed(
                "glibc",
                glibc_floor,
                f"the machine's glibc is not known: locked wheels for glibc ≥ {glibc_floor}"
                " (manylinux_2_28); for its own, pass --machine FILE written on it by"
                " `gpuenv detect --json`",
            )
        )
    return out
