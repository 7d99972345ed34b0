"""`gpuenv setup`: one command from a bare machine to a verified GPU (or CPU) environment, and
`gpuenv add`: extra packages into an environment setup made, kept across rebuilds. The
workflow is gpuenv.setup's; this module parses and renders."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import click

from gpuenv.commands.json_output import json_option
from gpuenv.commands.machine_options import check_python_option
from gpuenv.commands.progress import Reporter
from gpuenv.output.wrap import echo

if TYPE_CHECKING:
    from gpuenv.setup.workflow import SetupOutcome, SetupRun


@click.command("setup")
@click.argument("requirements", nargs=-1)
@click.option(
    "--lab",
    "lab_file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="The lab file (default: ./gpuenv.toml or ./lab.toml, when no REQUIREMENTS are given).",
)
@click.option("-n", "--name", default="default", show_default=True, help="The environment's name.")
@click.option("--python", callback=check_python_option, help="Pin the Python version (3.10).")
@click.option("--no-gpu", is_flag=True, help="Set up a CPU stack even if a GPU is present.")
@click.option("--require-gpu", is_flag=True, help="Fail unless every framework gets the GPU.")
@click.option("--jupyter", is_flag=True, help="Install ipykernel and register a Jupyter kernel.")
@click.option(
    "--allow-cpu-fallback",
    is_flag=True,
    help="When the planned GPU build cannot be locked (its index unreachable, a wheel missing),"
    " set up the CPU build instead of failing (exit 5).",
)
@click.option(
    "--fresh",
    is_flag=True,
    help="Forget the packages and options recorded for this environment by earlier runs.",
)
@click.option(
    "--split",
    is_flag=True,
    help="One environment per framework, named after it (torch, tensorflow, jax), each with"
    " the extra packages, its own kernel and `gpuenv run -n NAME`: for frameworks whose CUDA"
    " libraries cannot share one environment.",
)
@click.option(
    "--allow-any-origin",
    is_flag=True,
    help="Install a lockfile's files from wherever it says (a lab's lockfile), not only from"
    " your configured indexes and the framework indexes gpuenv knows.",
)
@click.option("--dry-run", is_flag=True, help="Show what would be installed; change nothing.")
@click.option("--force", is_flag=True, help="Redo every step even if nothing changed.")
@click.option("-q", "--quiet", is_flag=True, help="Print only the summary.")
@json_option()
def setup_command(
    requirements: tuple[str, ...],
    lab_file: Optional[Path],
    name: str,
    python: Optional[str],
    no_gpu: bool,
    require_gpu: bool,
    jupyter: bool,
    allow_cpu_fallback: bool,
    fresh: bool,
    split: bool,
    allow_any_origin: bool,
    dry_run: bool,
    force: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """Detect this machine, pick and lock its stack, install it, verify it on the GPU.

    REQUIREMENTS like torch, 'tensorflow>=2.11', jax, and any other packages to lock beside them
    (jupyterlab, 'pandas>=2'); with none, what the last run of this environment used, the lab
    file's stack, or PyTorch. Extra packages are recorded and kept when the environment is rebuilt.
    Safe to re-run: with nothing changed it is a quick no-op.
    """
    from gpuenv.setup.workflow import SetupRun

    for group, env_name in _environments(requirements, name, split, lab_file, as_json):
        run = SetupRun(
            group,
            name=env_name,
            lab_file=lab_file,
            python=python,
            no_gpu=no_gpu,
            require_gpu=require_gpu,
            jupyter=jupyter,
            fresh=fresh,
            dry_run=dry_run,
            force=force,
            allow_cpu_fallback=allow_cpu_fallback,
            allow_any_origin=allow_any_origin,
        )
        _run_and_render(run, quiet=quiet, as_json=as_json)


def _environments(
    requirements: tuple[str, ...],
    name: str,
    split: bool,
    lab_file: Optional[Path],
    as_json: bool,
) -> list[tuple[tuple[str, ...], str]]:
    """(requirements, environment name) of each environment to set up: one, or with --split
    one per framework, named after it, each with the extra packages."""
    if not split:
        return [(requirements, name)]
    if lab_file is not None or as_json or name != "default":
        raise click.UsageError(
            "--split makes one environment per framework, named after it:"
            " it goes without --lab, --name and --json"
        )
    from gpuenv.setup.options import split_by_framework

    return split_by_framework(requirements)


@click.command("add")
@click.argument("packages", nargs=-1, required=True)
@click.option("-n", "--name", default="default", show_default=True, help="The environment's name.")
@click.option("--dry-run", is_flag=True, help="Show what would be installed; change nothing.")
@click.option("-q", "--quiet", is_flag=True, help="Print only the summary.")
@json_option()
def add_command(
    packages: tuple[str, ...], name: str, dry_run: bool, quiet: bool, as_json: bool
) -> None:
    """Add PACKAGES to an environment `gpuenv setup` made: lock them with its stack and rebuild it.

    They are recorded with the environment, so they are still there after the next rebuild (a new
    driver, a newer knowledge base). `pip install` inside the environment is not: a rebuild drops
    what the lockfile does not hold.
    """
    from gpuenv.envs.errors import EnvironmentNotFound
    from gpuenv.setup.environment import installed_builds
    from gpuenv.setup.record import read_record
    from gpuenv.setup.workflow import SetupRun

    record = read_record(name)
    if record is None or not record.frameworks:
        raise EnvironmentNotFound(
            f"no environment {name!r} made by `gpuenv setup` (or it predates recorded requests):"
            f" run `gpuenv setup -n {name} FRAMEWORK {' '.join(packages)}` instead"
        )
    run = SetupRun(
        packages,
        name=name,
        python=record.python,
        no_gpu=record.no_gpu,
        require_gpu=record.require_gpu,
        allow_cpu_fallback=record.allow_cpu_fallback,
        dry_run=dry_run,
        adding=True,
        keep=installed_builds(name),
    )
    _run_and_render(run, quiet=quiet, as_json=as_json)


def _run_and_render(run: SetupRun, *, quiet: bool, as_json: bool) -> None:
    from gpuenv.setup.workflow import run_setup

    outcome = run_setup(run, Reporter(quiet=quiet or as_json))
    if outcome.verdict is not None and not quiet and not as_json:
        echo(outcome.verdict.render(), err=True)
    if as_json:
        _emit_json(outcome)
    elif outcome.status == "dry-run":
        action = "use" if outcome.lockfile_exists else "write"
        echo(
            f"dry run: would {action} {outcome.record.lockfile}, install it as {outcome.link},"
            " verify it"
        )
    else:
        _summary(outcome)
    if not outcome.verified and outcome.status != "dry-run":
        raise SystemExit(1)


def _emit_json(outcome: SetupOutcome) -> None:
    from gpuenv.commands.json_output import emit_result
    from gpuenv.setup.environment import activate_line

    record, run = outcome.record, outcome.run
    if outcome.status == "dry-run":
        fields: dict[str, Any] = {
            "status": "dry-run",
            "name": run.name,
            "environment": str(outcome.link),
            "stack": record.stack,
            "lockfile": record.lockfile,
            "packages": list(record.packages),
            **record.summary,
        }
        emit_result(click.get_current_context(), True, 0, **fields)
        return
    fields = {
        **record.summary,
        "status": _status(outcome),
        "replaced": outcome.replaced,
        "name": run.name,
        "environment": str(outcome.link),
        "stack": record.stack,
        "python": record.python_version,
        "backend": outcome.backend,
        "lockfile": record.lockfile,
        "lockfile_sha256": record.lockfile_sha256,
        "lab_class": record.lab_class,
        "packages": list(record.packages),
        "kernel": record.kernel,
        "verified": outcome.verified,
        "activate": activate_line(outcome.link, outcome.backend, run.name),
    }
    ok = outcome.verified
    emit_result(click.get_current_context(), ok, 0 if ok else 1, **fields)


def _status(outcome: SetupOutcome) -> str:
    """`installed` when this run changed the environment, else `unchanged`."""
    return "installed" if outcome.status == "installed" and outcome.changed else "unchanged"


def _summary(outcome: SetupOutcome) -> None:
    from gpuenv.setup.environment import activate_line

    record, name, command = outcome.record, outcome.run.name, outcome.run.command
    activate = activate_line(outcome.link, outcome.backend, name)
    if outcome.status == "unchanged":
        echo(
            f"gpuenv {command}: {name} is up to date ({record.stack}, verified"
            f" {record.verified_at}); nothing to do"
        )
        echo(f"  activate: {activate}")
        return
    where = f" (lab class {record.lab_class})" if record.lab_class else ""
    how = "unchanged"
    if outcome.changed:
        how = "rebuilt, replacing the one there" if outcome.replaced else "new"
    echo(f"gpuenv {command}: {record.stack}, Python {record.python_version}{where}")
    echo(f"  environment: {outcome.link}  ({how}, {outcome.backend})")
    if record.packages:
        echo(f"  packages:    {', '.join(record.packages)}")
    echo(f"  lockfile:    {record.lockfile}")
    if record.kernel:
        echo(f"  jupyter:     kernel {Path(record.kernel).name} ({record.kernel})")
    echo(f"  verify:      {'works as planned' if outcome.verified else 'FAILED: see above'}")
    echo(f"  activate:    {activate}")
