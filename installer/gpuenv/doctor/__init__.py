"""doctor: why this machine's gpuenv environments do or do not use the GPU, and what to do.

Pure: `diagnose` turns a Machine, the knowledge base, the environments (store metadata plus
verify Reports, when verify ran) and the process environment into Findings. Detecting, listing
and verifying happen in `gpuenv.commands.doctor`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from gpuenv.doctor.driver import limiting_generation, max_cuda, recommended_driver
from gpuenv.doctor.environment import EnvironmentInput, environment_findings
from gpuenv.doctor.findings import MACHINE, OK, PROBLEM, WARN, Finding
from gpuenv.doctor.machine_checks import machine_findings, visible_devices_findings
from gpuenv.machine import Machine
from gpuenv.recipes import KnowledgeBase

__all__ = [
    "MACHINE",
    "OK",
    "PROBLEM",
    "WARN",
    "Diagnosis",
    "EnvironmentDiagnosis",
    "EnvironmentInput",
    "Finding",
    "diagnose",
]

DOCTOR_SCHEMA = 1


@dataclass(frozen=True)
class EnvironmentDiagnosis:
    name: str
    path: str
    stack: dict[str, str]
    python: Optional[str]
    accelerator: str  # what the plan chose: cuda | cpu | mps
    gpu: str  # "used" (verify ran ops on it), "planned" (not verified), "not used"
    verified: bool
    findings: tuple[Finding, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": self.path,
            "stack": dict(self.stack),
            "python": self.python,
            "accelerator": self.accelerator,
            "gpu": self.gpu,
            "verified": self.verified,
            "findings": [f.to_json() for f in self.findings],
        }


@dataclass(frozen=True)
class Diagnosis:
    machine: dict[str, Any]  # the summary people read first
    machine_findings: tuple[Finding, ...]
    environments: tuple[EnvironmentDiagnosis, ...]

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.machine_findings + tuple(f for e in self.environments for f in e.findings)

    @property
    def ok(self) -> bool:
        return not any(f.severity == PROBLEM for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": DOCTOR_SCHEMA,
            "ok": self.ok,
            "machine": self.machine,
            "machine_findings": [f.to_json() for f in self.machine_findings],
            "environments": [e.to_json() for e in self.environments],
            "problems": [f.to_json() for f in self.findings if f.severity == PROBLEM],
            "faq": "gpuenv doctor --faq",
        }


def machine_summary(kb: KnowledgeBase, machine: Machine) -> dict[str, Any]:
    cuda = max_cuda(kb, machine)
    advice = recommended_driver(kb, machine) if machine.gpus else None
    gen = limiting_generation(kb, machine)
    gpus = []
    for gpu in machine.gpus:
        generation = kb.generation_for(gpu.compute_capability) if gpu.compute_capability else None
        gpus.append(
            {
                "index": gpu.index,
                "name": gpu.name,
                "compute_capability": gpu.compute_capability,
                "generation": generation.name if generation else None,
                "memory_mib": gpu.memory_mib,
            }
        )
    return {
        "os": machine.os.name or machine.os.family,
        "wsl": machine.os.wsl,
        "platform": machine.platform,
        "gpus": gpus,
        "driver": machine.driver.version if machine.driver else None,
        "max_cuda": cuda.version,
        "max_cuda_source": cuda.source or None,
        "last_driver_branch": gen.last_driver_branch if gen else None,
        "recommended_driver": advice.text if advice else None,
        "notes": list(machine.notes),
    }


def _gpu_use(machine: Machine, env: EnvironmentInput, findings: Sequence[Finding]) -> str:
    report = env.report
    if report is not None:
        used = any(f.device and "cpu" not in f.device.lower() for f in report.frameworks)
        return "used" if used else "not used"
    plan = env.metadata.get("plan") or {}
    if plan.get("accelerator") != "cuda" or not machine.gpus:
        return "not used"
    return "not used" if any(f.severity == PROBLEM for f in findings) else "planned"


def diagnose(
    machine: Machine,
    kb: KnowledgeBase,
    environments: Sequence[EnvironmentInput],
    environ: Mapping[str, str],
    shadowing: Sequence[Finding] = (),
) -> Diagnosis:
    """Everything doctor has to say about this machine and its environments; `shadowing` is
    what `gpuenv.doctor.shadowing` found on disk about the machine itself."""
    mine = machine_findings(kb, machine) + visible_devices_findings(machine, environ)
    mine += list(shadowing)
    envs = []
    for env in environments:
        found = environment_findings(kb, machine, env)
        meta = env.metadata
        plan = meta.get("plan") or {}
        envs.append(
            EnvironmentDiagnosis(
                name=env.name,
                path=str(env.path),
                stack={str(k): str(v) for k, v in (meta.get("stack") or {}).items()},
                python=meta.get("python") or plan.get("python"),
                accelerator=str(meta.get("accelerator") or plan.get("accelerator") or "cpu"),
                gpu=_gpu_use(machine, env, found),
                verified=env.report is not None,
                findings=tuple(found),
            )
        )
    return Diagnosis(machine_summary(kb, machine), tuple(mine), tuple(envs))
