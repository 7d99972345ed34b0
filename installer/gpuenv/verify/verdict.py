"""The findings about one framework while it is judged: what gpuenv.verify.judge (the common
checks) and gpuenv.verify.frameworks (each framework's own) both write to, so neither imports
the other's module for it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional

from gpuenv.verify.expectations import Expectations, ExpectedFramework
from gpuenv.verify.report import Check, FrameworkReport
from gpuenv.verify.runner import ProbeRun

REINSTALL = "reinstall the environment from its lockfile (gpuenv install LOCKFILE)"
_RELEVANT_LOG = re.compile(
    r"dlopen|dynamic library|libcu|libcudnn|cuInit|CUDA_ERROR|cuda|GPU|driver|plugin|Falling back",
    re.IGNORECASE,
)


@dataclass
class Verdict:
    """The findings about one framework, gathered while judging."""

    name: str
    expected: ExpectedFramework
    wants_gpu: bool
    expectations: Expectations
    facts: dict[str, Any]
    run: ProbeRun
    version: Optional[str] = None
    build: Optional[str] = None
    device: Optional[str] = None
    checks: list[Check] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    fix: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        self.checks.append(Check(name, ok, detail))
        return ok

    def problem(self, text: str, *fixes: str) -> None:
        self.problems.append(text)
        self.fix.extend(f for f in fixes if f not in self.fix)

    def log_lines(self, limit: int = 8) -> list[str]:
        """The probe's own warnings and the relevant lines of the child's stderr."""
        lines = [str(m) for m in self.facts.get("messages") or []]
        lines += [ln for ln in self.run.stderr_tail if _RELEVANT_LOG.search(ln)]
        seen: list[str] = []
        for ln in lines:
            if ln not in seen:
                seen.append(ln)
        return seen[-limit:]

    def report(self) -> FrameworkReport:
        ok = not self.problems and all(c.ok for c in self.checks)
        return FrameworkReport(
            name=self.name,
            ok=ok,
            version=self.version,
            build=self.build,
            device=self.device,
            checks=list(self.checks),
            problems=list(self.problems),
            fix=list(self.fix),
            notes=list(self.notes),
            seconds=self.run.seconds,
        )


def hidden_by_env(v: Verdict) -> bool:
    """Record the problem and return True when CUDA_VISIBLE_DEVICES hides every GPU."""
    value = v.facts.get("cuda_visible_devices")
    if value is None:
        return False
    first = str(value).split(",")[0].strip()
    if first.isdigit() or first.startswith(("GPU-", "MIG-")):
        return False  # "" and "-1" (and any other non-device) end the list: no GPU is visible
    v.problem(
        f"CUDA_VISIBLE_DEVICES is set to {value!r}, which hides every GPU from {v.name}",
        "unset CUDA_VISIBLE_DEVICES (or set it to the GPU's index, e.g. 0)",
    )
    return True
