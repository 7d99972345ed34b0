"""The export workflow: read and check the input, make the recipe, write the files."""

from __future__ import annotations

from pathlib import Path
from typing import Optional


def write_container(
    lockfile: Path, target: str, context: Path, *, wheelhouse: Optional[Path], base: Optional[str]
) -> tuple[list[Path], str]:
    """The build context for `target` (dockerfile | apptainer) in `context`: what was written,
    and the base image it builds on."""
    from gpuenv.export import apptainer, dockerfile
    from gpuenv.export.recipe import copy_wheels, recipe_of, write_context
    from gpuenv.lock.load import load_locked

    locked = load_locked(lockfile)
    recipe = recipe_of(locked, wheelhouse)
    image = base or dockerfile.default_base(recipe)
    if target == "dockerfile":
        name, text = dockerfile.FILE, dockerfile.dockerfile(recipe, image, lockfile.name)
    else:
        name, text = apptainer.FILE, apptainer.definition(recipe, image, lockfile.name)
    written = write_context(context, name, text, recipe)
    if wheelhouse is not None:
        copy_wheels(locked, wheelhouse, context)
        written.append(context / "wheels")
    return written, image


def write_lmod(name: str, output: Path) -> None:
    """The modulefile of environment `name` of the store, written atomically to `output`."""
    from gpuenv.envs.errors import EnvironmentNotFound
    from gpuenv.envs.store import EnvLocation, read_metadata
    from gpuenv.export.lmod import modulefile
    from gpuenv.fs.atomic_write import atomic_write_text

    location = EnvLocation.named(name)
    current = location.current()
    if current is None:
        raise EnvironmentNotFound(f"no environment {name!r}: `gpuenv envs` lists them")
    meta = read_metadata(current)
    stack = ", ".join(f"{k} {v}" for k, v in (meta.get("stack") or {}).items())
    text = modulefile(name, location.link, str(meta.get("backend")), stack, str(meta.get("python")))
    atomic_write_text(output, text)
