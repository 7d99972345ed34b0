"""The gpuenv command line: thin: parse, call, print. Each command lives in gpuenv.commands and
is imported only when it runs, so a command pays only for its own imports."""

from __future__ import annotations

import importlib
import sys
from typing import Any, Optional

import click

from gpuenv import __version__

COMMANDS = {
    "setup": "gpuenv.commands.setup:setup_command",
    "detect": "gpuenv.commands.detect:detect",
    "resolve": "gpuenv.commands.resolve:resolve_command",
    "explain": "gpuenv.commands.resolve:explain_command",
    "lock": "gpuenv.commands.lock:lock_command",
    "install": "gpuenv.commands.install:install_command",
    "fetch": "gpuenv.commands.install:fetch_command",
    "verify": "gpuenv.commands.verify:verify",
    "envs": "gpuenv.commands.envs:envs_command",
    "run": "gpuenv.commands.run:run_command",
    "activate": "gpuenv.commands.run:activate_command",
    "cache": "gpuenv.commands.cache:cache_command",
    "recipes": "gpuenv.commands.recipes:recipes",
    "doctor": "gpuenv.commands.doctor:doctor_command",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> Optional[click.Command]:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, _, attr = target.partition(":")
        command = getattr(importlib.import_module(module), attr)
        assert isinstance(command, click.Command)
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gpuenv")
def cli() -> None:
    """Which CUDA, cuDNN, TensorFlow, PyTorch and JAX this GPU needs: detect, resolve, lock, install, verify."""


def main(argv: Any = None) -> None:
    try:
        code = cli.main(args=argv, prog_name="gpuenv", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("gpuenv: aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        sys.exit(1)
    except Exception as exc:
        from gpuenv.errors import exit_code

        status = exit_code(exc)
        if status is None:
            raise  # a bug: the traceback is the most useful report
        click.echo(f"gpuenv: error: {exc}", err=True)
        sys.exit(status)
    sys.exit(code if isinstance(code, int) else 0)
