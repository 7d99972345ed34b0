"""`gpuenv lab match`: which class of a lab file a machine belongs to, and its lockfile;
`gpuenv lab lockfiles`: every class's lockfile, and whether it is there.

The fleet role (ansible/gpuenv_lab) asks these on the controller: `match` about each host's
`gpuenv detect --json`, so every host is matched by gpuenv's own rules (`Lab.match`), and
`lockfiles` when it fetches the files of the whole lab."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import click

from gpuenv.commands import json_output


@click.group("lab")
def lab_command() -> None:
    """Questions about a lab file."""


@lab_command.command("match")
@click.argument("lab_file", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option(
    "--machine",
    "machine_file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="A Machine JSON file (`gpuenv detect --json` on the host); default: this machine.",
)
@json_output.json_option("Print the class and its lockfile as JSON.")
def match_command(lab_file: Path, machine_file: Optional[Path], as_json: bool) -> None:
    """The class of LAB_FILE this machine (or --machine) belongs to, and its lockfile.

    Fails (exit 2) when no class fits, or when the class's lockfile is not there: a fleet
    installs the lockfiles the lab committed, made with `gpuenv lock --lab`."""
    from gpuenv.lab.load import load_lab
    from gpuenv.recipes import load_knowledge_base

    if machine_file is not None:
        from gpuenv.machine.describe import load_machine_file

        machine = load_machine_file(machine_file)
    else:
        from gpuenv.detect import detect_machine

        machine = detect_machine()
    lab = load_lab(lab_file, load_knowledge_base())
    cls = lab.class_for(machine)
    lockfile = lab.committed_lockfile(cls)
    if as_json:
        json_output.emit_result(
            click.get_current_context(),
            lab=os.path.abspath(lab_file),
            lab_name=lab.name,
            machine_class=cls.name,
            has_gpu=cls.has_gpu,
            lockfile=str(lockfile),
        )
        return
    click.echo(f"{cls.name}: {lockfile}")


@lab_command.command("lockfiles")
@click.argument("lab_file", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@json_output.json_option("Print each class's lockfile, and whether it exists, as JSON.")
def lockfiles_command(lab_file: Path, as_json: bool) -> None:
    """Each class of LAB_FILE with its lockfile, and whether that lockfile exists."""
    from gpuenv.lab.load import load_lab
    from gpuenv.recipes import load_knowledge_base

    lab = load_lab(lab_file, load_knowledge_base())
    rows = [(cls.name, lab.lockfile(cls)) for cls in lab.classes]
    if as_json:
        json_output.emit_result(
            click.get_current_context(),
            lab=os.path.abspath(lab_file),
            classes=[
                {"machine_class": name, "lockfile": str(path), "exists": path.is_file()}
                for name, path in rows
            ],
        )
        return
    for name, path in rows:
        click.echo(f"{name}: {path}{'' if path.is_file() else ' (missing)'}")
