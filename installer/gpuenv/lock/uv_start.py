"""Starting `uv pip compile` in a fresh private work folder, with only os imported (uv.spawn):
the `gpuenv` program starts uv on a command line's last request before anything else is loaded
(lock.last_request), and PipCompile starts it the same way when it locks."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing: see _entry
if TYPE_CHECKING:
    from collections.abc import Sequence

    from gpuenv.uv.spawn import Process

PROJECT = "pyproject.toml"
CONSTRAINTS = "constraints.txt"
OUTPUT = "pylock.toml"


def compile_command(
    uv: str,
    work: str,
    options: Sequence[str],
    index_args: Sequence[str],
    cutoff: Sequence[str],
) -> list[str]:
    """The uv command line of one request, run in `work` (which holds its project and
    constraints)."""
    return [
        uv,
        "pip",
        "compile",
        os.path.join(work, PROJECT),
        "--output-file",
        os.path.join(work, OUTPUT),
        *options,
        "--constraint",
        os.path.join(work, CONSTRAINTS),
        *index_args,
        *cutoff,
    ]


def run(cmd: list[str], work: str, picks: bool = False) -> Process:
    """A command of compile_command, running in `work` (fs.workdir.uv_environment); `picks`:
    with its resolver's debug lines on stderr (lock.uv_picks)."""
    from gpuenv.fs.workdir import uv_environment
    from gpuenv.uv.spawn import spawn

    env = uv_environment(work)
    if picks:
        from gpuenv.lock.uv_picks import log_environment

        env = log_environment(env)
    return spawn(cmd, env=env)


def start(
    uv: str,
    project: str,
    constraints: str,
    options: Sequence[str],
    index_args: Sequence[str],
    cutoff: Sequence[str],
    picks: bool = False,
) -> tuple[Process, str]:
    """uv running on the request in a new work folder (fs.workdir), and that folder: the caller
    removes it (fs.workdir.remove_workdir) once uv is done or stopped. `picks`: as run's."""
    from gpuenv.fs.workdir import make_workdir, remove_workdir

    work = make_workdir("lock")
    try:
        for name, text in ((PROJECT, project), (CONSTRAINTS, constraints)):
            with open(os.path.join(work, name), "w", encoding="utf-8") as fh:
                fh.write(text)
        return run(compile_command(uv, work, options, index_args, cutoff), work, picks), work
    except BaseException:
        remove_workdir(work)
        raise
