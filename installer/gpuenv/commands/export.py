"""`gpuenv export`: a lockfile as a container recipe (Dockerfile, Apptainer), or an environment
as an Lmod modulefile. The work is gpuenv.export's; this module parses and says what it wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import click

from gpuenv.commands import json_output
from gpuenv.output.wrap import echo

TARGETS = ("dockerfile", "apptainer", "lmod")


@click.command("export")
@click.argument("lockfile", required=False, type=click.Path(path_type=Path, dir_okay=False))
@click.option("--to", "target", type=click.Choice(TARGETS), required=True, help="What to make.")
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    required=True,
    help="dockerfile/apptainer: the build context folder (made if missing); lmod: the .lua file.",
)
@click.option("-n", "--name", help="lmod: the environment of gpuenv's store to load.")
@click.option(
    "--from",
    "wheelhouse",
    type=click.Path(path_type=Path, file_okay=False),
    help="dockerfile/apptainer: copy the wheels from this wheelhouse (`gpuenv fetch`) into the"
    " context and install them offline.",
)
@click.option("--base", help="dockerfile/apptainer: the base image (default python:X.Y-slim).")
@json_output.json_option("Print what was written as JSON.")
def export_command(
    lockfile: Optional[Path],
    target: str,
    output: Path,
    name: Optional[str],
    wheelhouse: Optional[Path],
    base: Optional[str],
    as_json: bool,
) -> None:
    """Export LOCKFILE as a Dockerfile or an Apptainer definition that installs exactly its
    hashed wheels and checks each framework imports; or (--name ENV) an environment as an Lmod
    modulefile."""
    from gpuenv.export import build

    if target == "lmod":
        if lockfile is not None or name is None:
            raise click.UsageError("--to lmod exports an environment: give --name ENV, no LOCKFILE")
        build.write_lmod(name, output)
        use = f"module use {output.parent} && module load {output.stem}"
        _said(as_json, [output], use)
        return
    if lockfile is None or name is not None:
        raise click.UsageError(f"--to {target} exports a lockfile: give LOCKFILE, not --name")
    written, image = build.write_container(
        lockfile, target, output, wheelhouse=wheelhouse, base=base
    )
    if base is None:  # an assumption: said, as every other one
        echo(f"note: no --base given: built on {image}, for the plan's Python", err=True)
    tool = "docker build" if target == "dockerfile" else "apptainer build IMAGE.sif"
    _said(as_json, written, f"{tool} {output if target == 'dockerfile' else output / 'gpuenv.def'}")


def _said(as_json: bool, written: list[Path], then: str) -> None:
    if as_json:
        json_output.emit({"written": [str(p) for p in written], "next": then})
        return
    echo(f"wrote {', '.join(str(p) for p in written)}")
    echo(f"then: {then}")
