"""--name / --prefix: which environment a command works on."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_NAME = "default"


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


def location(name: Optional[str], prefix: Optional[Path]) -> Any:
    from gpuenv.envs.store import EnvLocation

    if name and prefix:
        raise click.UsageError("--name and --prefix exclude each other")
    if prefix:
        return EnvLocation.prefix(prefix)
    return EnvLocation.named(DEFAULT_NAME if name is None else name)
