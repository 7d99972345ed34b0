"""resolve: Machine + requirements -> Plan. Pure: no I/O beyond reading the knowledge base.

plan = resolve(machine, ["tensorflow", "torch"])

The names below load from their modules on first use: install, verify and the other stages
import gpuenv.resolve.plan for the Plan type, and importing a submodule runs this file first, so
it must not import the resolver's rules, candidates and explanations (30-35 ms) itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuenv._lazy import lazy_attributes

if TYPE_CHECKING:
    from gpuenv.resolve.plan import DEFAULT_REQUIREMENTS, Plan
    from gpuenv.resolve.requirements import RequirementError
    from gpuenv.resolve.resolver import ResolveError, resolve
    from gpuenv.resolve.target import Availability, TargetError

__all__ = [
    "DEFAULT_REQUIREMENTS",
    "Availability",
    "Plan",
    "RequirementError",
    "ResolveError",
    "TargetError",
    "resolve",
]

_HOMES = {
    "DEFAULT_REQUIREMENTS": "gpuenv.resolve.plan",
    "Availability": "gpuenv.resolve.target",
    "Plan": "gpuenv.resolve.plan",
    "RequirementError": "gpuenv.resolve.requirements",
    "ResolveError": "gpuenv.resolve.resolver",
    "TargetError": "gpuenv.resolve.target",
    "resolve": "gpuenv.resolve.resolver",
}

__getattr__ = lazy_attributes(__name__, _HOMES)
