"""`gpuenv setup`: one command from a bare machine to a verified GPU (or CPU) environment."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Optional

import click

from gpuenv.commands.machine_options import check_python_option
from gpuenv.commands.progress import Reporter


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
@click.option("--dry-run", is_flag=True, help="Show what would be installed; change nothing.")
@click.option("--force", is_flag=True, help="Redo every step even if nothing changed.")
@click.option("-q", "--quiet", is_flag=True, help="Print only the summary.")
def setup_command(
    requirements: tuple[str, ...],
    lab_file: Optional[Path],
    name: str,
    python: Optional[str],
    no_gpu: bool,
    require_gpu: bool,
    dry_run: bool,
    force: bool,
    quiet: bool,
) -> None:
    """Detect this machine, pick and lock its stack, install it, verify it on the GPU.

    REQUIREMENTS like torch, 'tensorflow>=2.11', jax; with none, the lab file's stack, or PyTorch.
    Safe to re-run: with nothing changed it is a quick no-op.
    """
    from gpuenv.cache import cache_dir
    from gpuenv.detect import detect_machine
    from gpuenv.envs.artifacts import artifacts_of, gather
    from gpuenv.envs.python_check import check_python_available
    from gpuenv.envs.store import EnvLocation, interpreter
    from gpuenv.envs.transaction import install, up_to_date
    from gpuenv.indexes import user_index_config
    from gpuenv.lab import discover_lab
    from gpuenv.lock import LockOptions, lock_plan
    from gpuenv.lock.lockfile import read_lockfile
    from gpuenv.lock.pypi import find_uv
    from gpuenv.recipes import load_knowledge_base
    from gpuenv.setup import (
        SetupOptions,
        discard_pending,
        inputs_hash,
        now,
        pending_lockfile,
        plan_setup,
        promote_lockfile,
        read_state,
        write_state,
    )
    from gpuenv.verify import Expectations, verify_environment

    report = Reporter(quiet=quiet)
    kb = load_knowledge_base()
    location = EnvLocation.named(name)
    lab, lab_note = discover_lab(Path.cwd(), lab_file, requirements, kb)
    if lab_note:
        report.say(f"note: {lab_note}")
    opts = SetupOptions(requirements, name, lab, python, no_gpu, require_gpu, dry_run, force)
    machine = detect_machine()
    indexes = user_index_config()
    digest = inputs_hash(machine, opts, kb, indexes)
    state = read_state(name)
    if (
        not force
        and not dry_run
        and state.get("inputs_hash") == digest
        and state.get("verified")
        and up_to_date(state.get("lockfile_sha256", ""), location)
    ):
        click.echo(
            f"gpuenv setup: {name} is up to date ({state.get('stack')}, verified {state.get('verified_at')});"
            " nothing to do"
        )
        click.echo(f"  activate: {state.get('activate')}")
        return

    report.say(_machine_line(machine))
    chosen = plan_setup(machine, opts, kb, indexes, report.say)
    for note in chosen.notes:
        report.say(f"note: {note}")
    for warning in chosen.plan.warnings:
        report.say(f"warning: {warning}")
    stack = ", ".join(f"{n} {f.version} [{f.variant}]" for n, f in chosen.plan.frameworks.items())
    report.say(f"stack: {stack}; Python {chosen.plan.python}; {chosen.plan.accelerator}")
    if dry_run:
        action = "use" if chosen.lockfile_exists else "write"
        click.echo(
            f"dry run: would {action} {chosen.lockfile}, install it as {location.link}, verify it"
        )
        return

    # A new lockfile is written aside and becomes the recorded one only once its environment
    # is live: an interrupted setup leaves the old environment with its own lockfile.
    pending = None if chosen.lockfile_exists else pending_lockfile(chosen.lockfile)
    try:
        if pending is not None:
            report.say(f"locking -> {chosen.lockfile}")
            lock_plan(
                chosen.plan,
                LockOptions(output=pending, portable=lab is not None, indexes=indexes),
            )
        locked = replace(read_lockfile(pending or chosen.lockfile), path=chosen.lockfile)
        check_python_available(locked, uv=find_uv())  # fail fast: before anything is downloaded
        files = gather(
            artifacts_of(locked), cache=cache_dir(), indexes=indexes, progress=report.progress
        )
        report.done_downloading()
        result = install(locked, location, files, uv=find_uv(), say=report.say)
        if pending is not None:
            promote_lockfile(pending, chosen.lockfile)
    finally:
        if pending is not None:
            discard_pending(pending)
    report.say("verifying inside the environment")
    verdict = verify_environment(interpreter(result.env_dir), Expectations.from_plan(locked.plan))
    if not quiet:
        click.echo(verdict.render(), err=True)
    activate = _activate_hint(result.link, result.backend)
    write_state(
        name,
        {
            "inputs_hash": digest,
            "lockfile": str(chosen.lockfile),
            "lockfile_sha256": locked.content_sha256,
            "stack": stack,
            "verified": verdict.ok,
            "verified_at": now(),
            "activate": activate,
            "lab_class": chosen.lab_class,
        },
    )
    where = f" (lab class {chosen.lab_class})" if chosen.lab_class else ""
    click.echo(f"gpuenv setup: {stack}, Python {locked.python}{where}")
    click.echo(
        f"  environment: {result.link}  ({'new' if result.changed else 'unchanged'}, {result.backend})"
    )
    click.echo(f"  lockfile:    {chosen.lockfile}")
    click.echo(f"  verify:      {'works as planned' if verdict.ok else 'FAILED: see above'}")
    click.echo(f"  activate:    {activate}")
    if not verdict.ok:
        raise SystemExit(1)


def _machine_line(machine: object) -> str:
    from gpuenv.machine import Machine

    assert isinstance(machine, Machine)
    gpus = ", ".join(f"{g.name} ({g.compute_capability})" for g in machine.gpus) or "no NVIDIA GPU"
    driver = f"driver {machine.driver.version}" if machine.driver else "no NVIDIA driver"
    return f"machine: {machine.os.name or machine.os.family} {machine.platform}, {gpus}, {driver}"


def _activate_hint(link: Path, backend: str) -> str:
    if sys.platform == "win32":
        return f"{link}\\activate.ps1" if backend == "conda" else f"{link}\\Scripts\\Activate.ps1"
    return f"source {link}/activate.sh" if backend == "conda" else f"source {link}/bin/activate"
