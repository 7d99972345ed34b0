"""Findings about the machine itself: GPU, driver, and CUDA_VISIBLE_DEVICES."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Optional

from gpuenv.doctor.driver import (
    driver_tuple,
    jetson_soc,
    limiting_generation,
    max_cuda,
    recommended_driver,
)
from gpuenv.doctor.findings import OK, PROBLEM, WARN, Finding
from gpuenv.machine import Machine
from gpuenv.recipes import KnowledgeBase

VISIBLE = "CUDA_VISIBLE_DEVICES"
WSL_DRIVER = (
    "WSL2 uses the Windows host's NVIDIA driver: install the driver on Windows, never a Linux"
    " NVIDIA driver inside WSL2 (https://docs.nvidia.com/cuda/wsl-user-guide/index.html)"
)


def machine_findings(kb: KnowledgeBase, machine: Machine) -> list[Finding]:
    if not machine.gpus:
        return [_no_gpu(kb, machine)]
    findings: list[Finding] = []
    for gpu in machine.gpus:
        if gpu.compute_capability is None:
            findings.append(
                Finding(
                    WARN,
                    "unknown-compute-capability",
                    f"the compute capability of GPU {gpu.index} ({gpu.name}) is unknown",
                    ("gpuenv's GPU table does not list it and the driver did not say",),
                    ("describe it: `gpuenv resolve --gpu X.Y` with its compute capability",),
                )
            )
    advice = recommended_driver(kb, machine)
    if machine.driver is None:
        findings.append(
            Finding(
                PROBLEM,
                "no-driver",
                f"an NVIDIA GPU ({machine.gpus[0].name}) is present but no working NVIDIA driver"
                " answered",
                tuple(machine.notes),
                ((advice.text,) if advice else ()) + ((WSL_DRIVER,) if machine.os.wsl else ()),
            )
        )
        return findings
    findings += _driver_findings(kb, machine)
    return findings


def _no_gpu(kb: KnowledgeBase, machine: Machine) -> Finding:
    if machine.os.family == "macos":
        return Finding(
            WARN,
            "no-gpu",
            "no NVIDIA GPU: macOS has no CUDA driver",
            ("NVIDIA CUDA is not supported on current macOS",),
            ("on Apple silicon, PyTorch uses the Apple GPU through MPS (device 'mps')",),
        )
    fix = [
        "nothing to fix if this machine has no NVIDIA GPU: environments run on the CPU",
        "if it has one, install its NVIDIA driver, then check with `nvidia-smi` and"
        " `gpuenv detect`",
    ]
    if machine.os.wsl:
        fix = [WSL_DRIVER]
    return Finding(WARN, "no-gpu", "no NVIDIA GPU found", tuple(machine.notes), tuple(fix))


def _driver_findings(kb: KnowledgeBase, machine: Machine) -> list[Finding]:
    assert machine.driver is not None
    version = machine.driver.version
    cuda = max_cuda(kb, machine)
    findings: list[Finding] = []
    gen = limiting_generation(kb, machine)
    have = driver_tuple(version)
    branch = kb.driver_branch(have) if have is not None else None  # Windows 472.50 is R470
    if gen is not None and branch is not None and branch > int(gen.last_driver_branch or 0):
        findings.append(
            Finding(
                WARN,
                "driver-beyond-generation",
                f"driver {version} is newer than R{gen.last_driver_branch}, the last branch that"
                f" supports {gen.name} GPUs",
                ("the GPU may not be usable with this driver",),
                (f"install the newest R{gen.last_driver_branch} driver",),
            )
        )
    why = [f"max CUDA {cuda.version} ({cuda.source})"] if cuda.version else []
    why.append(
        "a driver runs CUDA builds up to its own CUDA version, and older ones; pip wheels bring"
        " their own CUDA runtime, so no CUDA toolkit is needed (`gpuenv doctor --faq`)"
    )
    advice = recommended_driver(kb, machine)
    fix: tuple[str, ...] = ()
    jetson = jetson_soc(kb, machine) is not None  # its driver comes with JetPack
    if (
        not jetson
        and advice
        and advice.minimum
        and have
        and (driver_tuple(advice.minimum) or ()) > have
    ):
        fix = (f"optional, for the newest builds: {advice.text}",)
    findings.append(
        Finding(
            OK,
            "driver",
            f"NVIDIA driver {version}, CUDA up to {cuda.version or 'unknown'}",
            tuple(why),
            fix,
        )
    )
    return findings


def visible_devices_findings(machine: Machine, environ: Mapping[str, str]) -> list[Finding]:
    """CUDA_VISIBLE_DEVICES hides GPUs when empty, -1, or naming a device that does not exist:
    CUDA reads the list up to the first invalid entry."""
    value = environ.get(VISIBLE)
    if value is None:
        return []
    count = len(machine.gpus)
    visible, stopped_at = _parse_visible(value, count)
    shown = f"{VISIBLE}={value!r}"
    order = (
        (
            "CUDA numbers GPUs fastest first, nvidia-smi by PCI bus; set CUDA_DEVICE_ORDER=PCI_BUS_ID"
            " to make the indices agree",
        )
        if count > 1
        else ()
    )
    if visible:
        if stopped_at is None:
            return [
                Finding(
                    OK,
                    "cuda-visible-devices",
                    f"{shown}: GPU(s) {', '.join(visible)} visible",
                    order,
                )
            ]
        return [
            Finding(
                WARN,
                "cuda-visible-devices",
                f"{shown}: CUDA ignores {stopped_at!r} and everything after it",
                (f"only {', '.join(visible)} stay visible", *order),
                (f"remove {stopped_at!r} from {VISIBLE}",),
            )
        ]
    why = f"{stopped_at!r} is not a GPU here" if stopped_at else "the list is empty"
    if stopped_at in ("-1",):
        why = "-1 is the usual way to hide every GPU on purpose"
    what = f"{shown} hides every GPU from CUDA programs (torch, TensorFlow, JAX)"
    return [
        Finding(
            PROBLEM if count else WARN,
            "cuda-visible-devices",
            what,
            (why, f"this machine has {count} NVIDIA GPU(s), numbered from 0", *order),
            (
                f"unset {VISIBLE} (bash: `unset {VISIBLE}`; PowerShell:"
                f" `Remove-Item Env:{VISIBLE}`), or set it to a GPU index such as 0",
            ),
        )
    ]


def _parse_visible(value: str, count: int) -> tuple[list[str], Optional[str]]:
    visible: list[str] = []
    for raw in value.split(","):
        entry = raw.strip()
        if entry.startswith(("GPU-", "MIG-")):
            visible.append(entry)
            continue
        if entry.isdigit() and int(entry) < count and entry not in visible:
            visible.append(entry)
            continue
        return visible, entry
    return visible, None
