"""A Finding: one thing doctor found, how bad it is, why, and what to do about it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

OK = "ok"
WARN = "warn"
PROBLEM = "problem"
SEVERITIES = (OK, WARN, PROBLEM)
MACHINE = "machine"  # the subject of findings about the machine itself


@dataclass(frozen=True)
class Finding:
    severity: str  # ok | warn | problem
    code: str  # stable id for programs: "no-gpu", "driver-too-old", "torch-cpu-build", ...
    what: str
    why: tuple[str, ...] = ()
    fix: tuple[str, ...] = ()
    subject: str = MACHINE  # "machine", or the environment's name

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {SEVERITIES}, got {self.severity!r}")

    def to_json(self) -> dict[str, Any]:
        return {
            "severity": self.severity,
            "code": self.code,
            "subject": self.subject,
            "what": self.what,
            "why": list(self.why),
            "fix": list(self.fix),
        }
