"""`gpuenv detect`: describe this machine (OS, CPU, driver, GPUs, Pythons) for people or as JSON."""

from __future__ import annotations

import click

from gpuenv.commands.json_output import json_option
from gpuenv.machine import Machine
from gpuenv.output.wrap import echo


def summary(machine: Machine) -> str:
    """The human-readable description of a Machine."""
    o = machine.os
    os_line = o.name or o.family
    if o.version and o.version not in os_line:
        os_line += f" ({o.version})"
    if o.wsl:
        os_line += ", under WSL2"
    if o.windows_build:
        os_line += f", build {o.windows_build}"
    lines = [
        f"OS:        {os_line}",
        f"CPU:       {machine.arch}",
        f"Platform:  {machine.platform or 'unknown'}",
    ]
    if o.family == "linux":
        lines.append(f"glibc:     {machine.glibc or 'not found (musl or other libc)'}")
    if machine.driver:
        cuda = machine.driver.cuda or "unknown"
        lines.append(f"Driver:    NVIDIA {machine.driver.version} (supports CUDA up to {cuda})")
    else:
        lines.append("Driver:    no NVIDIA driver")
    if machine.gpus:
        lines.append("GPUs:")
        for g in machine.gpus:
            cc = g.compute_capability or "unknown"
            mem = f", {g.memory_mib} MiB" if g.memory_mib else ""
            pci = f", PCI {g.pci_id}" if g.pci_id else ""
            lines.append(f"  [{g.index}] {g.name}: compute capability {cc}{mem}{pci}")
            lines.append(f"      from {g.source}")
    else:
        lines.append("GPUs:      none")
    if machine.pythons:
        lines.append("Pythons:")
        lines += [f"  {p.version:<8} {p.path}  ({p.source})" for p in machine.pythons]
    if machine.notes:
        lines.append("Notes:")
        lines += [f"  - {n}" for n in machine.notes]
    return "\n".join(lines)


@click.command("detect")
@json_option("Print the Machine as JSON (for --machine).")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=5.0,
    show_default=True,
    help="Seconds each probe (NVML, nvidia-smi, ...) may take before it is cut off.",
)
def detect(as_json: bool, timeout: float) -> None:
    """Describe this machine: OS, CPU, NVIDIA driver and GPUs, Pythons."""
    from gpuenv.detect import detect_machine

    machine = detect_machine(timeout=timeout)
    if as_json:
        click.echo(machine.dumps(), nl=False)
    else:
        echo(summary(machine))
