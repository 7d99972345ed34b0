"""`gpuenv lock`: resolve (or read a plan), then lock it for the target into a lockfile."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import click

from gpuenv.commands.machine_options import machine_from_options, machine_options


@click.command("lock")
@click.argument("requirements", nargs=-1)
@machine_options
@click.option("--python", help="Pin the Python version (3.10).")
@click.option("--no-gpu", is_flag=True, help="Lock a CPU stack even if a GPU is present.")
@click.option("--require-gpu", is_flag=True, help="Fail unless every framework gets the GPU.")
@click.option(
    "--plan",
    "plan_file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="Lock this Plan (`gpuenv resolve --json`) instead of resolving.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    default=Path("gpuenv.lock.yml"),
    show_default=True,
    help="The lockfile to write.",
)
@click.option(
    "--portable",
    is_flag=True,
    help="Record default-index files by project, name and hash, not by host URL.",
)
@click.option(
    "--channel", "channels", multiple=True, help="conda channel (repeatable; default conda-forge)."
)
@click.option(
    "--exclude-newer",
    default="auto",
    show_default=True,
    help="Resolve dependencies as of a date: auto (the plan's era for old stacks), none, or YYYY-MM-DD.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["conda-lock", "pylock"]),
    default="conda-lock",
    show_default=True,
    help="conda-lock v1 file, or PEP 751 pylock.toml (pip-only plans).",
)
@click.option(
    "--no-probe",
    is_flag=True,
    help="Do not ask the indexes what they publish before resolving (lock fails if a file is missing).",
)
@click.option(
    "--check",
    is_flag=True,
    help="Exit 1 if the lockfile does not match these inputs; write nothing.",
)
def lock_command(
    requirements: tuple[str, ...],
    machine_file: Optional[Path],
    gpu: Optional[str],
    driver: Optional[str],
    os_name: Optional[str],
    arch: Optional[str],
    gpu_index: Optional[int],
    python: Optional[str],
    no_gpu: bool,
    require_gpu: bool,
    plan_file: Optional[Path],
    output: Path,
    portable: bool,
    channels: tuple[str, ...],
    exclude_newer: str,
    fmt: str,
    no_probe: bool,
    check: bool,
) -> None:
    """Lock REQUIREMENTS (torch, 'tensorflow>=2.11', jax) for a machine into a reproducible lockfile."""
    from gpuenv.indexes import user_index_config
    from gpuenv.lock import LockOptions, check_lockfile, lock_plan
    from gpuenv.lock.conda import DEFAULT_CHANNELS
    from gpuenv.recipes import load_knowledge_base
    from gpuenv.resolve import resolve
    from gpuenv.resolve.plan import Plan

    kb = load_knowledge_base()
    indexes = user_index_config()
    options = LockOptions(
        output=output,
        channels=channels or DEFAULT_CHANNELS,
        portable=portable,
        exclude_newer=exclude_newer,
        indexes=indexes,
        format=fmt,
    )
    notes: list[str] = list(indexes.notes)
    if plan_file is not None:
        plan = Plan.from_json(json.loads(plan_file.read_text(encoding="utf-8")))
    else:
        machine = machine_from_options(
            kb, machine_file=machine_file, gpu=gpu, driver=driver, os_name=os_name, arch=arch
        )
        resolve_args: dict[str, Any] = dict(
            kb=kb, python=python, no_gpu=no_gpu, require_gpu=require_gpu, gpu_index=gpu_index
        )
        if check or no_probe:
            plan = resolve(machine, requirements or ("torch",), **resolve_args)
        else:
            from gpuenv.lock.availability import gather
            from gpuenv.resolve.requirements import parse_requirements

            frameworks = [r.framework for r in parse_requirements(list(requirements or ("torch",)))]
            available = gather(kb, frameworks, machine.platform, indexes)
            plan = resolve(machine, requirements or ("torch",), available=available, **resolve_args)
            # only the unreachable sources that cost this plan a candidate are worth a word
            missed = " ".join(r.message for r in plan.rejected if r.rule == "unavailable")
            notes += [n for n in available.unreachable if n.split(": ", 1)[0] in missed]
    if check:
        ok, message = check_lockfile(plan, options)
        click.echo(message, err=not ok)
        raise SystemExit(0 if ok else 1)
    for note in notes:
        click.echo(f"note: {note}", err=True)
    for warning in plan.warnings:
        click.echo(f"warning: {warning}", err=True)
    result = lock_plan(plan, options)
    stack = ", ".join(f"{n} {f.version} [{f.variant}]" for n, f in plan.frameworks.items())
    era = f", dependencies as of {result.exclude_newer}" if result.exclude_newer else ""
    click.echo(
        f"locked {stack} for {plan.platform}, Python {plan.python} ({plan.accelerator}): "
        f"{result.pip_count} pip and {result.conda_count} conda packages{era} -> {result.path}"
    )
