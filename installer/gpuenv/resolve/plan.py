"""The Plan: resolve's output, lock's input (ARCHITECTURE.md: "Contracts")."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

PLAN_SCHEMA = 1
DEFAULT_REQUIREMENTS = ("torch",)  # what is planned when no framework is asked for


@dataclass(frozen=True)
class PipRequirement:
    """One requirement to install from PyPI-style indexes, and the index that has it."""

    requirement: str  # "torch==2.7.1+cu118", "tensorflow[and-cuda]==2.15.1"
    index: Optional[str] = None  # the index that publishes it; None: the user's default index

    def to_json(self) -> dict[str, Any]:
        return {"requirement": self.requirement, "index": self.index}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PipRequirement:
        return cls(requirement=str(data["requirement"]), index=data.get("index"))


@dataclass(frozen=True)
class FrameworkChoice:
    """The release and build chosen for one framework."""

    name: str
    version: str
    variant: str
    cuda: Optional[str]
    cudnn: Optional[str]
    package: str
    released: Optional[str]
    gpu: bool
    related: dict[str, str] = field(default_factory=dict)
    # the NVIDIA wheel requirements it brings (recorded pins, or packages assumed by kind), where
    # it takes any: what two frameworks in one environment must agree on
    nvidia: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "version": self.version,
            "variant": self.variant,
            "cuda": self.cuda,
            "cudnn": self.cudnn,
            "package": self.package,
            "released": self.released,
            "gpu": self.gpu,
            "related": dict(self.related),
        }
        if self.nvidia:  # absent otherwise: a plan without NVIDIA wheels reads as it did
            out["nvidia"] = list(self.nvidia)
        return out

    @classmethod
    def from_json(cls, name: str, data: dict[str, Any]) -> FrameworkChoice:
        return cls(
            name=name,
            version=str(data["version"]),
            variant=str(data["variant"]),
            cuda=data.get("cuda"),
            cudnn=data.get("cudnn"),
            package=str(data.get("package") or name),
            released=data.get("released"),
            gpu=bool(data.get("gpu")),
            related=dict(data.get("related") or {}),
            nvidia=tuple(str(r) for r in data.get("nvidia") or ()),
        )


@dataclass(frozen=True)
class RejectedCandidate:
    """A candidate the resolver turned down, as the Plan reports it."""

    candidate: str
    rule: str
    message: str
    source: str = ""  # the primary source of the knowledge-base row the rejection rests on
    caveat: str = ""  # that row is unverified, or rests on data marked incomplete

    def to_json(self) -> dict[str, str]:
        data = {"candidate": self.candidate, "rule": self.rule, "message": self.message}
        if self.source:
            data["source"] = self.source
        if self.caveat:
            data["caveat"] = self.caveat
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RejectedCandidate:
        return cls(
            str(data["candidate"]),
            str(data["rule"]),
            str(data["message"]),
            source=str(data.get("source") or ""),
            caveat=str(data.get("caveat") or ""),
        )


@dataclass(frozen=True)
class Plan:
    """What resolve chose for a machine, and why: lock's input."""

    python: str
    platform: str
    accelerator: str  # cuda | cpu | mps
    glibc: Optional[str]  # the target's glibc (for manylinux tags), None off Linux or unknown
    gpu: Optional[dict[str, Any]]
    driver: Optional[str]
    frameworks: dict[str, FrameworkChoice]
    pip: tuple[PipRequirement, ...]
    conda: tuple[str, ...]
    companions: tuple[str, ...]  # pins installed with the stack
    constraints: tuple[str, ...]  # caps that apply only if the package is pulled in
    exclude_newer: Optional[str]  # lock the rest of an old stack "as of" its era (ISO date)
    warnings: tuple[str, ...]
    reasons: tuple[str, ...]
    fixes: tuple[str, ...]  # what would give a better stack (driver, WSL2, ...)
    rejected: tuple[RejectedCandidate, ...]
    knowledge_base: str
    sources: tuple[str, ...] = ()  # the chosen rows' primary sources, one line per choice
    # projects locked without `exclude_newer` (a companion no wheel met in the stack's era)
    exclude_newer_exempt: tuple[str, ...] = ()

    def to_json(self, *, with_rejected: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "schema": PLAN_SCHEMA,
            "python": self.python,
            "platform": self.platform,
            "accelerator": self.accelerator,
            "glibc": self.glibc,
            "gpu": self.gpu,
            "driver": self.driver,
            "frameworks": {k: v.to_json() for k, v in self.frameworks.items()},
            "pip": [p.to_json() for p in self.pip],
            "conda": list(self.conda),
            "companions": list(self.companions),
            "constraints": list(self.constraints),
            "exclude_newer": self.exclude_newer,
            **(
                {"exclude_newer_exempt": list(self.exclude_newer_exempt)}
                if self.exclude_newer_exempt  # absent otherwise: older plans read as they did
                else {}
            ),
            "warnings": list(self.warnings),
            "reasons": list(self.reasons),
            "fixes": list(self.fixes),
            "knowledge_base": self.knowledge_base,
        }
        if with_rejected:  # explain material: not part of what a lockfile pins
            data["rejected"] = [r.to_json() for r in self.rejected]
            data["sources"] = list(self.sources)
        return data

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2) + "\n"

    def summary(self) -> dict[str, Any]:
        """The part a script looks at (`--json` of lock, install, setup): target and stack;
        the whole Plan is `resolve --json`."""
        return {
            "platform": self.platform,
            "python": self.python,
            "accelerator": self.accelerator,
            "frameworks": {
                name: {"version": f.version, "variant": f.variant, "cuda": f.cuda, "cudnn": f.cudnn}
                for name, f in self.frameworks.items()
            },
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Plan:
        if data.get("schema") != PLAN_SCHEMA:
            raise ValueError(f"unsupported plan schema {data.get('schema')!r}")
        return cls(
            python=str(data["python"]),
            platform=str(data["platform"]),
            accelerator=str(data["accelerator"]),
            glibc=data.get("glibc"),
            gpu=data.get("gpu"),
            driver=data.get("driver"),
            frameworks={
                k: FrameworkChoice.from_json(k, v)
                for k, v in (data.get("frameworks") or {}).items()
            },
            pip=tuple(PipRequirement.from_json(p) for p in data.get("pip") or []),
            conda=tuple(data.get("conda") or []),
            companions=tuple(data.get("companions") or []),
            constraints=tuple(data.get("constraints") or []),
            exclude_newer=data.get("exclude_newer"),
            exclude_newer_exempt=tuple(str(p) for p in data.get("exclude_newer_exempt") or ()),
            warnings=tuple(data.get("warnings") or []),
            reasons=tuple(data.get("reasons") or []),
            fixes=tuple(data.get("fixes") or []),
            rejected=tuple(RejectedCandidate.from_json(r) for r in data.get("rejected") or []),
            knowledge_base=str(data.get("knowledge_base") or ""),
            sources=tuple(str(x) for x in data.get("sources") or []),
        )
