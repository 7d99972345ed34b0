"""What `gpuenv lock`'s flags mean together: those --lab and --plan decide themselves (refused
beside them), and the command line a lockfile's header records for regenerating it."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Optional

import click


def refuse_conflicts(
    requirements: tuple[str, ...],
    lab_file: Optional[Path],
    plan_file: Optional[Path],
    class_names: tuple[str, ...],
) -> None:
    if lab_file is not None:
        _refuse_beside("--lab", _NOT_WITH_LAB, requirements, _LAB_DECIDES)
    elif plan_file is not None:
        _refuse_beside("--plan", _NOT_WITH_PLAN, requirements, _PLAN_DECIDES)
    if class_names and lab_file is None:
        raise click.UsageError("--class picks classes of a lab file: give --lab FILE with it")


# What --lab and --plan decide themselves: each of these given beside them would be ignored, so
# it is refused. (--portable is not: lab lockfiles are portable anyway.)
_PLAN_FLAGS = (
    "machine_file",
    "gpu",
    "driver",
    "os_name",
    "arch",
    "gpu_index",
    "python",
    "no_gpu",
    "require_gpu",
    "no_probe",
)
_NOT_WITH_PLAN = _PLAN_FLAGS
# --require-gpu, --no-probe and --allow-cpu-fallback apply to every class of a lab
_NOT_WITH_LAB = (
    *(f for f in _PLAN_FLAGS if f not in ("require_gpu", "no_probe")),
    "plan_file",
    "output",
    "exclude_newer",
    "fmt",
)
_LAB_DECIDES = (
    "the stack and the machines (the lab file's [stack] and [[class]] rows, always portable)"
)
_PLAN_DECIDES = "the stack and the machine (the saved Plan)"


def _refuse_beside(
    option: str, refused: tuple[str, ...], requirements: tuple[str, ...], decides: str
) -> None:
    ctx = click.get_current_context()
    given = [
        p.opts[-1] if p.opts else f"--{p.name}"
        for p in ctx.command.params
        if p.name in refused
        and ctx.get_parameter_source(p.name) not in (click.core.ParameterSource.DEFAULT, None)
    ]
    if requirements:
        given.insert(0, "REQUIREMENTS")
    if given:
        raise click.UsageError(
            f"{option} names {decides}: {', '.join(given)} cannot be given with it"
        )


def regenerate_command(ctx: click.Context, output: Path) -> str:
    """`gpuenv lock ...` as given (options at their defaults left out), for the file's header."""
    parts = ["gpuenv", "lock"]
    for param in ctx.command.params:
        value = ctx.params.get(param.name or "")
        if param.name in ("check", "output"):
            continue
        if isinstance(param, click.Argument):
            parts += [str(v) for v in value or ()]
            continue
        if not isinstance(param, click.Option) or value in (None, False, ()):
            continue
        if value == param.default and not param.multiple:
            continue
        flag = max(param.opts, key=len)
        if param.is_flag:
            parts.append(flag)
        elif param.multiple:
            for item in value:
                parts += [flag, str(item)]
        else:
            parts += [flag, str(value)]
    return shlex.join([*parts, "-o", str(output)])
