"""The commands of the `gpuenv` program and the module of each, imported only when it runs.

Its own module, importing nothing (typing neither): the program's first frame (`_entry`) reads it
before click.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing: see _entry
if TYPE_CHECKING:
    from collections.abc import Sequence

COMMANDS = {
    "setup": "gpuenv.commands.setup:setup_command",
    "add": "gpuenv.commands.setup:add_command",
    "detect": "gpuenv.commands.detect:detect",
    "resolve": "gpuenv.commands.resolve:resolve_command",
    "explain": "gpuenv.commands.resolve:explain_command",
    "lock": "gpuenv.commands.lock:lock_command",
    "install": "gpuenv.commands.install:install_command",
    "fetch": "gpuenv.commands.install:fetch_command",
    "export": "gpuenv.commands.export:export_command",
    "verify": "gpuenv.commands.verify:verify",
    "envs": "gpuenv.commands.envs:envs_command",
    "run": "gpuenv.commands.run:run_command",
    "activate": "gpuenv.commands.run:activate_command",
    "cache": "gpuenv.commands.cache:cache_command",
    "recipes": "gpuenv.commands.recipes:recipes",
    "doctor": "gpuenv.commands.doctor:doctor_command",
    "lab": "gpuenv.commands.lab:lab_command",
}


# the group's own options that let a command run after them (--help and --version do not)
GROUP_FLAGS = frozenset({"-v", "--verbose", "-q", "--quiet"})


def command_of(args: Sequence[str]) -> str | None:
    """The command a command line runs (`gpuenv -v resolve ...` -> "resolve"), or None."""
    for arg in args:
        if arg not in GROUP_FLAGS:
            return arg if arg in COMMANDS else None
    return None
