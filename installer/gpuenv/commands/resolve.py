"""`gpuenv resolve` and `gpuenv explain`: the stack that runs on a machine, and why."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Optional

import click

from gpuenv.commands.assumed import assumed_field
from gpuenv.commands.json_output import emit_result, json_option
from gpuenv.commands.machine_options import plan_options
from gpuenv.machine.describe import machine_from_options
from gpuenv.output.wrap import echo
from gpuenv.recipes import load_knowledge_base
from gpuenv.resolve import DEFAULT_REQUIREMENTS, Plan, resolve
from gpuenv.resolve.report import render

if TYPE_CHECKING:
    from pathlib import Path


def _plan(
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
    every_rejection: bool = True,
) -> tuple[Plan, dict[str, str]]:
    """The plan, and what it assumed of a described machine (each said on stderr)."""
    from gpuenv.commands import assumed

    kb = load_knowledge_base()
    machine = machine_from_options(
        kb, machine_file=machine_file, gpu=gpu, driver=driver, os_name=os_name, arch=arch
    )
    plan = resolve(
        machine,
        requirements or DEFAULT_REQUIREMENTS,
        kb=kb,
        python=python,
        no_gpu=no_gpu,
        require_gpu=require_gpu,
        gpu_index=gpu_index,
        every_rejection=every_rejection,
    )
    by_flags = assumed.described(machine_file, gpu, driver, os_name, arch)
    items = assumed.assumed_by(
        kb,
        machine,
        plan,
        by_flags=by_flags,
        driver=driver,
        python=python,
        os_name=os_name,
        arch=arch,
    )
    assumed.say(items)
    return plan, assumed.as_json(items)


@click.command("resolve")
@plan_options
@json_option("Print the Plan as JSON (for `gpuenv lock --plan`).")
@click.option("-v", "--verbose", is_flag=True, help="Also list the rejected candidates and why.")
def resolve_command(
    requirements: tuple[str, ...], as_json: bool, verbose: bool, **opts: object
) -> None:
    """Pick the newest stack that runs on the machine: REQUIREMENTS like torch, 'tensorflow>=2.11', jax.

    With no requirements, plans PyTorch.
    """
    # the rejected candidates are listed with -v only: without it the search evaluates no more
    # candidates than it reads (those better than the chosen ones, all the reasons rest on)
    plan, assumed = _plan(requirements, every_rejection=verbose, **opts)  # type: ignore[arg-type]
    if as_json:
        # the Plan with what it assumed; `lock --plan` reads it back as a Plan
        data = {**plan.to_json(), **assumed_field(assumed)}
        if not verbose:
            del data["rejected"]  # only those the search met: a partial list would mislead
        click.echo(json.dumps(data, indent=2))
    else:
        echo(render(plan, explain=verbose))


@click.command("explain")
@plan_options
@json_option("Print the explanation as JSON: the whole Plan, rejected candidates included.")
def explain_command(requirements: tuple[str, ...], as_json: bool, **opts: object) -> None:
    """Like resolve, and list every rejected candidate with the rule that rejected it."""
    plan, assumed = _plan(requirements, **opts)  # type: ignore[arg-type]
    if as_json:  # the Plan as it is: whatever explain material it carries comes along
        data = {**plan.to_json(with_rejected=True), **assumed_field(assumed)}
        emit_result(click.get_current_context(), plan=data)
    else:
        echo(render(plan, explain=True))
