"""The flags that name the machine to plan for: a file, a description, or this machine."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional, TypeVar

import click

from gpuenv.machine import Machine, MachineError
from gpuenv.machine.describe import OS_CHOICES, describe_machine, load_machine_file, os_family
from gpuenv.recipes import KnowledgeBase

F = TypeVar("F", bound=Callable[..., Any])

_PYTHON = r"3\.[0-9]{1,2}(?:\.[0-9]{1,3})?"  # compiled on first use: only --python needs it


def check_flag_text(flag: str, value: Optional[str]) -> None:
    """A described machine's flag is either absent or says something: never empty, never a
    control character (a pasted newline), so nothing typed is silently read as "no GPU"."""
    if value is None:
        return
    if not value.strip():
        raise MachineError(
            f"{flag} is empty; give a value or leave {flag} out"
            + (" (no --gpu: a machine without an NVIDIA GPU)" if flag == "--gpu" else "")
        )
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise MachineError(f"{flag} {value!r} contains a control character (a pasted newline?)")


def check_python_option(
    ctx: click.Context, param: click.Parameter, value: Optional[str]
) -> Optional[str]:
    """--python is X.Y (or X.Y.Z, planned as X.Y): anything else is refused, not guessed at."""
    if value is not None and not re.fullmatch(_PYTHON, value):
        raise click.BadParameter(f"{value!r}: expected a Python version such as 3.11", ctx, param)
    return value


def machine_options(func: F) -> F:
    options = [
        click.option(
            "--machine",
            "machine_file",
            type=click.Path(path_type=Path),
            help="A Machine JSON file (`gpuenv detect --json > m.json`).",
        ),
        click.option(
            "--gpu",
            help='Describe the GPU: a name ("GeForce 940M", "940M", "RTX 3090"), a compute'
            " capability (6.1) or a PCI id (10de:1347).",
        ),
        click.option("--driver", help="Describe the NVIDIA driver version (457.49, 535.183.01)."),
        click.option(
            "--os",
            "os_name",
            callback=_os_option,
            help=f"Describe the OS: {', '.join(OS_CHOICES)} (win10, win11, ubuntu, ... name theirs).",
        ),
        click.option("--arch", help="Describe the CPU architecture (x86_64, aarch64, arm64)."),
        click.option(
            "--gpu-index",
            type=int,
            help="Plan for this GPU (default: the lowest compute capability).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _os_option(ctx: click.Context, param: click.Parameter, value: Optional[str]) -> Optional[str]:
    """--os as people write it, mapped to its family (said on stderr when it was an alias)."""
    if value is None:
        return None
    try:
        family, note = os_family(value)
    except MachineError as exc:
        raise click.BadParameter(str(exc).split(": ", 1)[1]) from None
    if note:
        click.echo(f"gpuenv: {note}", err=True)
    return family


def plan_options(func: F) -> F:
    """REQUIREMENTS, the machine flags, and the flags that shape a plan (resolve, explain, lock)."""
    func = click.option(
        "--require-gpu", is_flag=True, help="Fail unless every framework gets the GPU."
    )(func)
    func = click.option(
        "--no-gpu", is_flag=True, help="Plan for the CPU even if a GPU is present."
    )(func)
    func = click.option(
        "--python", callback=check_python_option, help="Pin the Python version (3.10)."
    )(func)
    func = machine_options(func)
    return click.argument("requirements", nargs=-1)(func)


def machine_from_options(
    kb: KnowledgeBase,
    *,
    machine_file: Optional[Path],
    gpu: Optional[str],
    driver: Optional[str],
    os_name: Optional[str],
    arch: Optional[str],
) -> Machine:
    for flag, value in (("--gpu", gpu), ("--driver", driver), ("--arch", arch)):
        check_flag_text(flag, value)
    described = any(v is not None for v in (gpu, driver, os_name, arch))
    if machine_file is not None:
        if described:
            raise MachineError("--machine and --gpu/--driver/--os/--arch exclude each other")
        return load_machine_file(machine_file)
    if described:
        return describe_machine(kb, gpu=gpu, driver=driver, os_name=os_name, arch=arch)
    from gpuenv.detect import detect_machine  # only when observing this machine

    return detect_machine()
