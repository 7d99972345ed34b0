"""The flags that name the machine to plan for: a file, a description, or this machine."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Optional, TypeVar

import click

from gpuenv.machine import MachineError
from gpuenv.machine.describe import OS_CHOICES, PYTHON_VERSION, os_family
from gpuenv.output.wrap import echo

if TYPE_CHECKING:
    from pathlib import Path

F = TypeVar("F", bound=Callable[..., Any])


def check_python_option(
    ctx: click.Context, param: click.Parameter, value: Optional[str]
) -> Optional[str]:
    """--python is X.Y (or X.Y.Z, planned as X.Y): anything else is refused, not guessed at."""
    if value is not None and not re.fullmatch(PYTHON_VERSION, value):
        raise click.BadParameter(f"{value!r}: expected a Python version such as 3.11", ctx, param)
    return value


def _machine_path(
    ctx: click.Context, param: click.Parameter, value: Optional[str]
) -> Optional[Path]:
    """--machine as a Path; pathlib is imported only when one is given (resolve's start-up)."""
    if value is None:
        return None
    from pathlib import Path

    return Path(value)


def machine_options(func: F) -> F:
    options = [
        click.option(
            "--machine",
            "machine_file",
            type=click.Path(),
            callback=_machine_path,
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
        echo(f"gpuenv: {note}", err=True)
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
