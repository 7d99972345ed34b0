"""What an environment promised: Expectations, derived from its Plan (or assumed: the CPU)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

from gpuenv.resolve.plan import Plan

EXPECTATIONS_SCHEMA = 1


@dataclass(frozen=True)
class ExpectedFramework:
    version: Optional[str] = None  # None: any version
    variant: Optional[str] = None  # cu118, cuda, cpu, ...; None: any build
    gpu: bool = False
    cuda: Optional[str] = None
    cudnn: Optional[str] = None

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "variant": self.variant,
            "gpu": self.gpu,
            "cuda": self.cuda,
            "cudnn": self.cudnn,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ExpectedFramework:
        return cls(
            version=data.get("version"),
            variant=data.get("variant"),
            gpu=bool(data.get("gpu")),
            cuda=data.get("cuda"),
            cudnn=data.get("cudnn"),
        )


@dataclass(frozen=True)
class Expectations:
    accelerator: str = "cpu"  # cuda | cpu | mps
    frameworks: dict[str, ExpectedFramework] = field(default_factory=dict)
    gpu_cc: Optional[str] = None
    gpu_name: Optional[str] = None
    python: Optional[str] = None  # "3.11"; None: any
    source: str = "assumed"  # "plan", "file" or "assumed" (nothing was promised)

    @classmethod
    def from_plan(cls, plan: Plan) -> Expectations:
        gpu = plan.gpu or {}
        cc = gpu.get("compute_capability")
        return cls(
            accelerator=plan.accelerator,
            frameworks={
                name: ExpectedFramework(
                    version=fw.version, variant=fw.variant, gpu=fw.gpu, cuda=fw.cuda, cudnn=fw.cudnn
                )
                for name, fw in plan.frameworks.items()
            },
            gpu_cc=str(cc) if cc else None,
            gpu_name=gpu.get("name"),
            python=plan.python,
            source="plan",
        )

    @classmethod
    def cpu_only(cls, frameworks: list[str]) -> Expectations:
        """No promise: whatever is installed must import and compute on the CPU."""
        return cls(frameworks={name: ExpectedFramework() for name in frameworks})

    def to_json(self) -> dict[str, Any]:
        return {
            "expectations": EXPECTATIONS_SCHEMA,
            "accelerator": self.accelerator,
            "frameworks": {k: v.to_json() for k, v in self.frameworks.items()},
            "gpu_cc": self.gpu_cc,
            "gpu_name": self.gpu_name,
            "python": self.python,
            "source": self.source,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Expectations:
        """Expectations JSON, or a Plan JSON (`gpuenv resolve --json`)."""
        if "expectations" not in data:
            return cls.from_plan(Plan.from_json(dict(data)))
        if data["expectations"] != EXPECTATIONS_SCHEMA:
            raise ValueError(f"unsupported expectations schema {data['expectations']!r}")
        return cls(
            accelerator=str(data.get("accelerator") or "cpu"),
            frameworks={
                k: ExpectedFramework.from_json(v) for k, v in (data.get("frameworks") or {}).items()
            },
            gpu_cc=data.get("gpu_cc"),
            gpu_name=data.get("gpu_name"),
            python=data.get("python"),
            source=str(data.get("source") or "file"),
        )

    def wants_gpu(self, framework: str) -> bool:
        fw = self.frameworks.get(framework)
        return self.accelerator in ("cuda", "mps") and fw is not None and fw.gpu
