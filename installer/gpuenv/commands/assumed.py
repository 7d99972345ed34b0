"""The assumptions of a plan for a described machine, as commands print them: one `note:`
line each on stderr, and `"assumed": {"driver": "576.02", ...}` in `--json`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from gpuenv.machine import Machine
from gpuenv.output.wrap import echo
from gpuenv.recipes import KnowledgeBase
from gpuenv.resolve.assumptions import Assumed, assumptions
from gpuenv.resolve.plan import Plan

if TYPE_CHECKING:
    from pathlib import Path


def described(
    machine_file: Optional[Path],
    gpu: Optional[str],
    driver: Optional[str],
    os_name: Optional[str],
    arch: Optional[str],
) -> bool:
    """Whether the machine came from flags (not detected, not a machine file)."""
    return machine_file is None and any(v is not None for v in (gpu, driver, os_name, arch))


def assumed_by(
    kb: KnowledgeBase,
    machine: Machine,
    plan: Plan,
    *,
    by_flags: bool,
    driver: Optional[str],
    python: Optional[str],
    glibc_floor: Optional[str] = None,
    os_name: Optional[str] = None,
    arch: Optional[str] = None,
) -> list[Assumed]:
    if not by_flags:  # detected or read from `gpuenv detect --json`: the machine's own facts
        return []
    return assumptions(
        kb,
        machine,
        plan,
        driver_assumed=driver is None,
        python_assumed=python is None,
        glibc_floor=glibc_floor,
        os_assumed=os_name is None,
        arch_assumed=arch is None,
    )


def say(items: list[Assumed]) -> None:
    for item in items:
        echo(f"note: {item.line}", err=True)


def as_json(items: list[Assumed]) -> dict[str, str]:
    return {item.fact: item.value for item in items}


def assumed_field(assumed: dict[str, str]) -> dict[str, Any]:
    """The `assumed` key of a JSON document: present only when something was assumed."""
    return {"assumed": assumed} if assumed else {}
