"""`gpuenv run` and `gpuenv activate`: use an environment without knowing where it lives."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional

import click

from gpuenv.commands.env_options import env_options, location
from gpuenv.envs.activation import SHELLS


def _environment(name: Optional[str], prefix: Optional[Path]) -> tuple[Any, Path, dict[str, Any]]:
    from gpuenv.envs.errors import EnvironmentNotFound
    from gpuenv.envs.store import read_metadata

    where = location(name, prefix)
    current = where.current()
    if current is None:
        raise EnvironmentNotFound(
            f"no gpuenv environment at {where.link}: `gpuenv setup` or `gpuenv install` makes one"
        )
    return where, current, read_metadata(current)


@click.command(
    "run",
    # options stop at the command (`run -n X python -V`); before it, an unknown option is an
    # error, never the command (`run --json -n X -- ...` used to run `--json`)
    context_settings={"allow_interspersed_args": False},
)
@env_options
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def run_command(name: Optional[str], prefix: Optional[Path], command: tuple[str, ...]) -> None:
    """Run COMMAND inside an environment: `gpuenv run -n NAME -- python train.py`.

    Its folders come first on PATH and VIRTUAL_ENV (or CONDA_PREFIX) is set; the exit status is
    the command's. LD_LIBRARY_PATH loses the folders that hold CUDA libraries, which would shadow
    the environment's own (-v names them). conda packages' activate.d scripts do not run: use
    `gpuenv activate` for them.
    """
    from gpuenv.envs.activation import command_environment

    where, env_dir, meta = _environment(name, prefix)
    windows = sys.platform == "win32"
    # the link, not the version folder it points to: a rebuild replaces (and the next one
    # deletes) that folder, and the command's PATH must stay valid, as the kernel's does
    env = command_environment(where.link, str(meta.get("backend", "venv")), os.environ, windows)
    if sys.platform.startswith("linux"):
        env = _without_shadowing(env, env_dir)
    argv = list(command)
    if windows:  # no exec on Windows: run it and pass its status on
        sys.exit(subprocess.call(argv, env=env))
    try:
        os.execvpe(argv[0], argv, env)
    except FileNotFoundError:
        raise click.UsageError(
            f"{argv[0]}: command not found in {where.link} ({env_dir}) or on PATH"
        ) from None
    except PermissionError:
        raise click.UsageError(f"{argv[0]}: not executable") from None


def _without_shadowing(env: dict[str, str], env_dir: Path) -> dict[str, str]:
    from gpuenv.doctor.shadowing import clean_library_path
    from gpuenv.output import debug

    cleaned, removed = clean_library_path(env, env_dir)
    for folder, sonames in removed:
        debug(f"LD_LIBRARY_PATH without {folder}: it holds {', '.join(sonames)}")
    return cleaned


@click.command("activate")
@env_options
@click.option(
    "--shell",
    type=click.Choice(SHELLS),
    help="The shell to write for (default: the one this command runs under).",
)
@click.option("--hint", is_flag=True, help="Print the line to type instead of the script.")
def activate_command(
    name: Optional[str], prefix: Optional[Path], shell: Optional[str], hint: bool
) -> None:
    """Print what activates an environment in your shell.

    bash/zsh: eval "$(gpuenv activate -n NAME)"; fish: gpuenv activate -n NAME | source;
    PowerShell: gpuenv activate -n NAME | Out-String | Invoke-Expression.
    """
    from gpuenv.envs.activation import activate_hint, detect_shell, shell_hook

    where, _env_dir, meta = _environment(name, prefix)
    shell = shell or detect_shell(os.environ, sys.platform == "win32")
    backend = str(meta.get("backend", "venv"))
    if hint:
        click.echo(activate_hint(where.link, backend, shell, name))
        return
    platform = str(meta.get("platform", ""))
    # the link: a shell activated before a rebuild keeps working after it
    click.echo(shell_hook(where.link, backend, shell, platform))
