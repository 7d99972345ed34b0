"""The gpuenv command line: thin: parse, call, print. Each command lives in gpuenv.commands."""

from __future__ import annotations

import sys
from typing import Any

import click

from gpuenv import __version__
from gpuenv.commands.detect import detect
from gpuenv.commands.lock import lock_command
from gpuenv.commands.recipes import recipes
from gpuenv.commands.resolve import explain_command, resolve_command
from gpuenv.conda.client import CondaError
from gpuenv.errors import USER_ERRORS, exit_code
from gpuenv.lock.errors import LockError
from gpuenv.recipes import RecipeError
from gpuenv.resolve import ResolveError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gpuenv")
def cli() -> None:
    """Which CUDA, cuDNN, TensorFlow, PyTorch and JAX this GPU needs: detect, resolve, lock, install, verify."""


cli.add_command(detect)
cli.add_command(resolve_command)
cli.add_command(explain_command)
cli.add_command(recipes)
cli.add_command(lock_command)


def main(argv: Any = None) -> None:
    try:
        code = cli.main(args=argv, prog_name="gpuenv", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("gpuenv: aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except (*USER_ERRORS, ResolveError, RecipeError, LockError, CondaError) as exc:
        click.echo(f"gpuenv: error: {exc}", err=True)
        sys.exit(exit_code(exc))
    except BrokenPipeError:
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)
