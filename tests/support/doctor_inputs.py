"""An environment as doctor reads it (its metadata from a plan), for the doctor tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from gpuenv.doctor import EnvironmentInput
from gpuenv.resolve.plan import Plan
from gpuenv.verify.report import Report


def env_for(plan: Plan, name: str = "default", report: Optional[Report] = None) -> EnvironmentInput:
    meta: dict[str, Any] = {
        "platform": plan.platform,
        "python": plan.python,
        "accelerator": plan.accelerator,
        "stack": {n: f"{f.version} [{f.variant}]" for n, f in plan.frameworks.items()},
        "plan": plan.to_json(with_rejected=False),
    }
    return EnvironmentInput(name, Path("/envs") / name, meta, report)
