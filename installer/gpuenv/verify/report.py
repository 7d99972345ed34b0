"""The Report: what verify found, per framework, for people (render) and programs (JSON)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

REPORT_SCHEMA = 1


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Check:
        return cls(str(data["name"]), bool(data["ok"]), str(data.get("detail") or ""))


@dataclass(frozen=True)
class FrameworkReport:
    name: str
    ok: bool
    version: Optional[str] = None
    build: Optional[str] = None  # "CUDA 12.6, cuDNN 9.5.1", "CPU", ...
    device: Optional[str] = None  # where the ops ran: "cuda:0 NVIDIA A100 (8.0)", "cpu"
    checks: list[Check] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    fix: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # facts worth knowing that are not failures
    seconds: Optional[float] = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "ok": self.ok,
            "version": self.version,
            "build": self.build,
            "device": self.device,
            "checks": [c.to_json() for c in self.checks],
            "problems": list(self.problems),
            "fix": list(self.fix),
            "notes": list(self.notes),
            "seconds": self.seconds,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FrameworkReport:
        return cls(
            name=str(data["name"]),
            ok=bool(data["ok"]),
            version=data.get("version"),
            build=data.get("build"),
            device=data.get("device"),
            checks=[Check.from_json(c) for c in data.get("checks") or []],
            problems=list(data.get("problems") or []),
            fix=list(data.get("fix") or []),
            notes=list(data.get("notes") or []),
            seconds=data.get("seconds"),
        )


@dataclass(frozen=True)
class Report:
    python: str
    python_version: Optional[str]
    accelerator: str
    frameworks: tuple[FrameworkReport, ...]
    problems: tuple[str, ...] = ()  # about the environment as a whole (interpreter, Python)
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems and all(f.ok for f in self.frameworks)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": REPORT_SCHEMA,
            "ok": self.ok,
            "python": self.python,
            "python_version": self.python_version,
            "accelerator": self.accelerator,
            "frameworks": {f.name: f.to_json() for f in self.frameworks},
            "problems": list(self.problems),
            "notes": list(self.notes),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Report:
        return cls(
            python=str(data["python"]),
            python_version=data.get("python_version"),
            accelerator=str(data.get("accelerator") or "cpu"),
            frameworks=tuple(
                FrameworkReport.from_json(f) for f in (data.get("frameworks") or {}).values()
            ),
            problems=tuple(data.get("problems") or ()),
            notes=tuple(data.get("notes") or ()),
        )

    def render(self) -> str:
        version = f" (Python {self.python_version})" if self.python_version else ""
        lines = [f"Environment: {self.python}{version}", f"Expected:    {self.accelerator}"]
        lines += [f"  problem: {p}" for p in self.problems]
        lines += [f"  note: {n}" for n in self.notes]
        for fw in self.frameworks:
            status = "OK" if fw.ok else "FAILED"
            head = f"{fw.name} {fw.version or '(not importable)'}"
            if fw.build:
                head += f" [{fw.build}]"
            if fw.device:
                head += f" on {fw.device}"
            lines.append(f"{status:<7}{head}")
            for c in fw.checks:
                mark = "ok " if c.ok else "BAD"
                lines.append(f"    {mark} {c.name}" + (f": {c.detail}" if c.detail else ""))
            lines += [f"    problem: {p}" for p in fw.problems]
            lines += [f"    fix: {f}" for f in fw.fix]
            lines += [f"    note: {n}" for n in fw.notes]
        verdict = (
            "the environment works as planned"
            if self.ok
            else ("the environment does NOT do what its plan promised")
        )
        lines.append(f"Verdict: {verdict}")
        return "\n".join(lines)
