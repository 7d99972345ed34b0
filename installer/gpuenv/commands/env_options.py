"""--name / --prefix: which environment a command works on; --lock-timeout: how long to wait."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, TypeVar

import click

from gpuenv.envs.install_lockfile import DEFAULT_NAME as DEFAULT_NAME
from gpuenv.envs.install_lockfile import name_from_lockfile as name_from_lockfile

if TYPE_CHECKING:
    from gpuenv.envs.store import EnvLocation
    from gpuenv.index.config import IndexConfig
    from gpuenv.lock.model import LockedEnvironment

F = TypeVar("F", bound=Callable[..., Any])


def env_options(func: F) -> F:
    func = click.option(
        "--prefix",
        type=click.Path(path_type=Path, file_okay=False),
        help="The environment at this path (a link gpuenv manages).",
    )(func)
    return click.option(
        "-n",
        "--name",
        help=f"The environment of this name in gpuenv's store (default: {DEFAULT_NAME}).",
    )(func)


def lock_timeout_option(func: F) -> F:
    return click.option(
        "--lock-timeout",
        type=click.FloatRange(min=0),
        metavar="SECONDS",
        help="Give up (exit 1) after waiting this long for another gpuenv install of the same"
        " environment (default: GPUENV_LOCK_TIMEOUT, else wait until it finishes).",
    )(func)


def location(name: Optional[str], prefix: Optional[Path]) -> EnvLocation:
    """The EnvLocation; a bad name or --prefix is a usage error (exit 2), raised before any
    folder is made."""
    if name is not None and prefix is not None:
        raise click.UsageError("--name and --prefix exclude each other")
    from gpuenv.envs.install_lockfile import env_location

    return env_location(name, prefix)


def origin_options(func: F) -> F:
    """--index, --channel, --allow-any-origin: where a lockfile's files may come from (the
    lockfile-origin rule, gpuenv.envs.origins)."""
    func = click.option(
        "--allow-any-origin",
        is_flag=True,
        help="Install files from wherever the lockfile says, not only from your configured"
        " indexes, find-links locations and channels and the framework indexes gpuenv knows.",
    )(func)
    func = click.option(
        "--channel",
        "channels",
        multiple=True,
        metavar="CHANNEL",
        help="Also accept conda packages from this channel (repeatable; conda-forge always).",
    )(func)
    return click.option(
        "--index",
        "extra_indexes",
        multiple=True,
        metavar="URL",
        help="Also accept (and look up portable entries on) this index (repeatable), after the"
        " ones your pip or uv settings name.",
    )(func)


def checked_origins(
    locked: LockedEnvironment,
    indexes: IndexConfig,
    *,
    channels: tuple[str, ...] = (),
    allow_any_origin: bool = False,
) -> None:
    """Refuse a lockfile whose files come from anywhere the user did not configure (exit 2),
    unless --allow-any-origin."""
    from gpuenv.envs.install_lockfile import check_lockfile_origins

    check_lockfile_origins(locked, indexes, channels=channels, allow_any_origin=allow_any_origin)
