"""`gpuenv install` and `gpuenv fetch`: a lockfile becomes an environment, or a wheelhouse."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Optional

import click

from gpuenv.commands import json_output
from gpuenv.commands.env_options import (
    checked_origins,
    env_options,
    location,
    lock_timeout_option,
    name_from_lockfile,
    origin_options,
)
from gpuenv.commands.progress import Reporter


@click.command("install")
@click.argument("lockfile", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@env_options
@click.option("--offline", is_flag=True, help="Use no network: every file must come from --from.")
@click.option(
    "--from",
    "wheelhouse",
    type=click.Path(path_type=Path, exists=True, file_okay=False),
    help="A folder `gpuenv fetch` filled: take every file from there.",
)
@click.option(
    "--no-smoke-test", is_flag=True, help="Do not import the frameworks before switching."
)
@lock_timeout_option
@origin_options
@click.option(
    "--replace",
    is_flag=True,
    help="Replace an environment of another stack (other frameworks or accelerator) there.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Check the lockfile and say what would be installed where; change nothing.",
)
@click.option("-q", "--quiet", is_flag=True, help="Print only errors and the final line.")
@json_output.json_option("Print the environment installed (or already there) as JSON.")
def install_command(
    lockfile: Path,
    name: Optional[str],
    prefix: Optional[Path],
    offline: bool,
    wheelhouse: Optional[Path],
    no_smoke_test: bool,
    lock_timeout: Optional[float],
    extra_indexes: tuple[str, ...],
    channels: tuple[str, ...],
    allow_any_origin: bool,
    replace: bool,
    dry_run: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """Install LOCKFILE into an isolated environment, atomically; a no-op if it is already there.

    Without --name or --prefix the environment is named after the lockfile (jax.conda-lock.yml:
    jax)."""
    from gpuenv.envs.python_check import PythonLookup, python_hint
    from gpuenv.envs.transaction import check_location, tidy_leftovers, up_to_date
    from gpuenv.lock.load import read_lockfile_bytes
    from gpuenv.uv.binary import find_uv

    if offline and wheelhouse is None:
        raise click.UsageError("--offline needs --from DIR (a folder filled by `gpuenv fetch`)")
    if name is None and prefix is None:
        name = name_from_lockfile(lockfile)
    where = location(name, prefix)
    check_location(where)  # before anything is downloaded or a folder made
    raw = read_lockfile_bytes(lockfile)  # bounded: a pipe or /dev/zero is refused, not read
    if up_to_date(hashlib.sha256(raw).hexdigest(), where):
        tidy_leftovers(where)
        if as_json:  # stdout holds only the JSON document
            json_output.emit_result(
                click.get_current_context(), **_unchanged_json(where, prefix, lockfile, raw)
            )
            return
        click.echo(f"{where.link} is already installed from {lockfile.name}: nothing to do")
        return
    uv = find_uv()
    # uv looks for the Python the file names while gpuenv imports its lockfile stack and parses
    # and checks the file; the parsed file decides whether uv's answer is used
    with PythonLookup(uv, python_hint(raw)) as lookup:
        from gpuenv.cache import cache_dir
        from gpuenv.envs.artifacts import artifacts_of, gather
        from gpuenv.envs.consent import replace_refusal
        from gpuenv.envs.errors import StoreInputError
        from gpuenv.envs.python_check import check_python_available
        from gpuenv.envs.transaction import check_platform, install
        from gpuenv.index.config import user_index_config, with_indexes
        from gpuenv.lock.load import load_locked

        locked = load_locked(lockfile, raw)
        check_platform(locked)
        refusal = (
            None
            if replace
            else replace_refusal(where, locked.plan.frameworks, locked.plan.accelerator)
        )
        if refusal:
            raise StoreInputError(refusal)
        # with --from, every file is the wheelhouse's: no URL is used, no index read
        indexes = None if wheelhouse else with_indexes(user_index_config(), extra_indexes)
        if indexes is not None:
            checked_origins(locked, indexes, channels=channels, allow_any_origin=allow_any_origin)
        if dry_run:
            _say_dry_run(locked, where, lockfile)
            return
        # before any download
        base_python = check_python_available(locked, uv=uv, offline=offline, lookup=lookup)
    from gpuenv.envs.inventory import what_is_there

    report = Reporter(quiet=quiet)
    replaced = what_is_there(where)
    if replaced:  # said before any download: the old environment stays until the switch
        report.say(f"replacing {replaced} at {where.link} with {_stack(locked)}")
    files = gather(
        artifacts_of(locked),
        cache=cache_dir(),
        wheelhouse=wheelhouse,
        indexes=indexes,
        progress=report.progress,
    )
    report.done_downloading()
    result = install(
        locked,
        where,
        files,
        uv=uv,
        smoke=not no_smoke_test,
        say=report.say,
        lock_timeout=lock_timeout,
        notice=lambda line: click.echo(line, err=True),  # even with -q: never wait silently
        base_python=base_python,
    )
    if as_json:
        json_output.emit_result(
            click.get_current_context(), **_installed_json(where, prefix, lockfile, locked, result)
        )
        return
    click.echo(
        f"installed {_stack(locked)} (Python {locked.python}, {result.backend}) at {result.link}"
    )
    click.echo(f"  run it:   {result.link / result.python.relative_to(result.env_dir)}")
    click.echo(
        f"  check it: gpuenv verify {'--prefix ' + str(prefix) if prefix else '--name ' + where.name}"
    )


def _stack(locked: Any) -> str:
    """The lockfile's stack, as text safe to print (the file is untrusted)."""
    from gpuenv.output import shown

    return shown(
        ", ".join(f"{n} {f.version} [{f.variant}]" for n, f in locked.plan.frameworks.items())
    )


def _say_dry_run(locked: Any, where: Any, lockfile: Path) -> None:
    """What `install` would do, from the checked lockfile and the environment there now."""
    from gpuenv.envs.inventory import what_is_there

    replaced = what_is_there(where)
    click.echo(
        f"would install {_stack(locked)} (Python {locked.python}, {len(locked.conda)} conda and"
        f" {len(locked.pip)} pip packages, each hash-checked) from {lockfile.name} at"
        f" {where.link}{'; replacing ' + replaced if replaced else ' (new)'}; nothing changed"
        " (--dry-run)"
    )


@click.command("fetch")
@click.argument("lockfile", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option(
    "-d",
    "--dest",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="The wheelhouse folder to fill (for `gpuenv install --offline --from`).",
)
@origin_options
@click.option("-q", "--quiet", is_flag=True)
@json_output.json_option("Print the files fetched (name, sha256, size) as JSON.")
def fetch_command(
    lockfile: Path,
    dest: Path,
    extra_indexes: tuple[str, ...],
    channels: tuple[str, ...],
    allow_any_origin: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """Download every file LOCKFILE names into a folder, each checked against its hash."""
    from gpuenv.envs.artifacts import artifacts_of, fetch_all
    from gpuenv.index.config import user_index_config, with_indexes
    from gpuenv.lock.load import load_locked

    locked = load_locked(lockfile)
    indexes = with_indexes(user_index_config(), extra_indexes)
    checked_origins(locked, indexes, channels=channels, allow_any_origin=allow_any_origin)
    report = Reporter(quiet=quiet)
    files = fetch_all(artifacts_of(locked), dest, indexes=indexes, progress=report.progress)
    report.done_downloading()
    size = sum(f.path.stat().st_size for f in files)
    if as_json:
        json_output.emit_result(
            click.get_current_context(),
            lockfile=os.path.abspath(lockfile),
            destination=os.path.abspath(dest),
            files=[
                {
                    "name": f.path.name,
                    "package": f.artifact.name,
                    "kind": f.artifact.kind,
                    "sha256": f.artifact.sha256,
                    "md5": f.artifact.md5,
                    "size": f.path.stat().st_size,
                }
                for f in files
            ],
            total_bytes=size,
        )
        return
    click.echo(f"{len(files)} files ({size / 1e6:.1f} MB), all hashes checked, in {dest}")


def _environment_json(
    where: Any, prefix: Optional[Path], env_dir: Path, python: Path, changed: bool
) -> dict[str, Any]:
    """Where the environment is: its name (None with --prefix), the link, the version folder."""
    return {
        "name": None if prefix else where.name,
        "environment": str(where.link),
        "version_folder": str(env_dir),
        "interpreter": str(where.link / python.relative_to(env_dir)),
        "changed": changed,
    }


def _installed_json(
    where: Any, prefix: Optional[Path], lockfile: Path, locked: Any, result: Any
) -> dict[str, Any]:
    return {
        **_environment_json(where, prefix, result.env_dir, result.python, result.changed),
        "backend": result.backend,
        "lockfile": os.path.abspath(lockfile),
        "lockfile_sha256": locked.content_sha256,
        **json_output.plan_summary(locked.plan),
    }


def _unchanged_json(
    where: Any, prefix: Optional[Path], lockfile: Path, raw: bytes
) -> dict[str, Any]:
    """An install with nothing to do: the stack from the lockfile given, the backend from the
    environment's metadata (read as untrusted: a bad one is a clear error, exit 2)."""
    from gpuenv.envs.store import interpreter, read_metadata
    from gpuenv.lock.conda_lock.read import parse_lockfile

    locked = parse_lockfile(raw, lockfile)
    env_dir = where.current()
    return {
        **_environment_json(where, prefix, env_dir, interpreter(env_dir), False),
        "backend": read_metadata(env_dir).get("backend"),
        "lockfile": os.path.abspath(lockfile),
        "lockfile_sha256": locked.content_sha256,
        **json_output.plan_summary(locked.plan),
    }
