"""`gpuenv install` and `gpuenv fetch`: a lockfile becomes an environment, or a wheelhouse."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

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
from gpuenv.output.wrap import echo

if TYPE_CHECKING:
    from gpuenv.envs.install_lockfile import LockfileInstall
    from gpuenv.envs.store import EnvLocation
    from gpuenv.envs.transaction import InstallResult
    from gpuenv.lock.model import LockedEnvironment


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
    from gpuenv.envs.install_lockfile import install_lockfile

    if offline and wheelhouse is None:
        raise click.UsageError("--offline needs --from DIR (a folder filled by `gpuenv fetch`)")
    if name is None and prefix is None:
        name = name_from_lockfile(lockfile)
    report = Reporter(quiet=quiet)
    done = install_lockfile(
        lockfile,
        location(name, prefix),
        offline=offline,
        wheelhouse=wheelhouse,
        smoke=not no_smoke_test,
        lock_timeout=lock_timeout,
        extra_indexes=extra_indexes,
        channels=channels,
        allow_any_origin=allow_any_origin,
        replace=replace,
        dry_run=dry_run,
        say=report.say,
        progress=report.progress,
        done_downloading=report.done_downloading,
        notice=lambda line: echo(line, err=True),  # even with -q: never wait silently
    )
    _render(done, lockfile, prefix, as_json)


def _render(done: LockfileInstall, lockfile: Path, prefix: Optional[Path], as_json: bool) -> None:
    """What the install did, for people or (--json) for scripts."""
    from gpuenv.envs.install_lockfile import stack_text

    where = done.where
    if done.status == "unchanged":
        if as_json:  # stdout holds only the JSON document
            json_output.emit_result(
                click.get_current_context(), **_unchanged_json(where, prefix, lockfile, done.raw)
            )
            return
        echo(f"{where.link} is already installed from {lockfile.name}: nothing to do")
        return
    locked, result = done.locked, done.result
    assert locked is not None
    if done.status == "dry-run":
        if as_json:
            json_output.emit_result(
                click.get_current_context(),
                **_dry_run_json(where, prefix, lockfile, locked, done.replaced),
            )
            return
        _say_dry_run(locked, where, lockfile, done.replaced)
        return
    assert result is not None
    if as_json:
        json_output.emit_result(
            click.get_current_context(), **_installed_json(where, prefix, lockfile, locked, result)
        )
        return
    echo(
        f"installed {stack_text(locked)} (Python {locked.python}, {result.backend}) at {result.link}"
    )
    echo(f"  run it:   {result.link / result.python.relative_to(result.env_dir)}")
    echo(
        f"  check it: gpuenv verify {'--prefix ' + str(prefix) if prefix else '--name ' + where.name}"
    )


def _say_dry_run(
    locked: LockedEnvironment, where: EnvLocation, lockfile: Path, replaced: Optional[str]
) -> None:
    """What `install` would do, from the checked lockfile and the environment there now."""
    from gpuenv.envs.install_lockfile import stack_text

    echo(
        f"would install {stack_text(locked)} (Python {locked.python}, {len(locked.conda)} conda"
        f" and {len(locked.pip)} pip packages, each hash-checked) from {lockfile.name} at"
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
    echo(f"{len(files)} files ({size / 1e6:.1f} MB), all hashes checked, in {dest}")


def _environment_json(
    where: EnvLocation, prefix: Optional[Path], env_dir: Path, python: Path, changed: bool
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
    where: EnvLocation,
    prefix: Optional[Path],
    lockfile: Path,
    locked: LockedEnvironment,
    result: InstallResult,
) -> dict[str, Any]:
    return {
        **_environment_json(where, prefix, result.env_dir, result.python, result.changed),
        "backend": result.backend,
        "lockfile": os.path.abspath(lockfile),
        "lockfile_sha256": locked.content_sha256,
        **locked.plan.summary(),
    }


def _dry_run_json(
    where: EnvLocation,
    prefix: Optional[Path],
    lockfile: Path,
    locked: LockedEnvironment,
    replaced: Optional[str],
) -> dict[str, Any]:
    """What `install --dry-run` would do: install (`changed`), replacing what is there."""
    return {
        "name": None if prefix else where.name,
        "environment": str(where.link),
        "dry_run": True,
        "changed": True,
        "replaces": replaced,
        "lockfile": os.path.abspath(lockfile),
        "lockfile_sha256": locked.content_sha256,
        **locked.plan.summary(),
    }


def _unchanged_json(
    where: EnvLocation, prefix: Optional[Path], lockfile: Path, raw: bytes
) -> dict[str, Any]:
    """An install with nothing to do: the stack from the lockfile given, the backend from the
    environment's metadata (read as untrusted: a bad one is a clear error, exit 2)."""
    from gpuenv.envs.store import interpreter, read_metadata
    from gpuenv.lock.conda_lock.read import parse_lockfile

    locked = parse_lockfile(raw, lockfile)
    env_dir = where.current()
    if env_dir is None:  # removed since the install found it up to date
        from gpuenv.envs.errors import EnvironmentNotFound

        raise EnvironmentNotFound(f"{where.link} was removed while gpuenv read it")
    return {
        **_environment_json(where, prefix, env_dir, interpreter(env_dir), False),
        "backend": read_metadata(env_dir).get("backend"),
        "lockfile": os.path.abspath(lockfile),
        "lockfile_sha256": locked.content_sha256,
        **locked.plan.summary(),
    }
