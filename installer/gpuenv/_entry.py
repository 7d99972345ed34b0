"""The `gpuenv` program's first frame: Ctrl-C at any moment, start-up imports included, ends in
one line and the shell's usual status for it (130), never a traceback.

click turns Ctrl-C into its Abort only while a command runs; the imports before that (click
itself, the command's module) and the console script's own import of gpuenv.cli are outside it,
so the console script points here, where nothing but the standard library is imported first.
"""

from __future__ import annotations

import sys

# typing's flag, set by type checkers, without importing typing: that import alone took 4-10 ms
# of the time before uv starts (re, enum and collections come with it); the modules the program
# reads before uv starts (_start_early) do the same
TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Optional

INTERRUPTED_EXIT = 130  # 128 + SIGINT, what shells report for a command stopped by Ctrl-C
# The collector runs each time 700 more objects exist than it last saw; a command makes tens of
# thousands that live until it ends (modules, record classes, the parsed knowledge base), so it
# walked them 45 times in `gpuenv resolve` (7-10 ms of its 90). Every 50,000: garbage that
# only a collection frees (cycles) stays bounded, a few MB, in the long commands too.
GC_THRESHOLD = 50_000


def _start_early(command: Optional[str], args: list[str]) -> Optional[ModuleType]:
    """The uv work a command line can start before anything else is imported, started: a
    lock's `uv pip compile` (lock.last_request), an install's `uv python find`
    (envs.early_python; not setup's: its no-op, the common case, would pay for a search it
    never asks); the module, whose cancel_unclaimed stops what no command used."""
    if command == "lock":
        from gpuenv.lock import last_request

        last_request.start_early(args)
        return last_request
    if command == "install":
        from gpuenv.envs import early_python

        early_python.start_early()
        return early_python
    if command == "setup":
        from gpuenv.envs import early_python

        early_python.mark_program()  # the install's guess of its Python (python_check)
    return None


def main() -> None:
    import gc

    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
    try:
        from gpuenv.commands.table import command_of

        command = command_of(sys.argv[1:])
        early = _start_early(command, sys.argv[1:])  # uv first: see the docstrings there
        from gpuenv import dataclass_code

        # before the first record class: see its docstring
        dataclass_code.install(command or dataclass_code.ANY_COMMAND)
        from gpuenv.cli import main as cli_main

        try:
            cli_main()
        finally:
            if early is not None:
                early.cancel_unclaimed()
            dataclass_code.save()
    except KeyboardInterrupt:
        try:
            sys.stderr.write("gpuenv: interrupted\n")
            sys.stderr.flush()
        except (OSError, ValueError, KeyboardInterrupt):
            pass  # stderr gone, or a second Ctrl-C: the status still says it
        sys.exit(INTERRUPTED_EXIT)
    finally:
        # the work is done and the status chosen: a Ctrl-C while the interpreter exits would
        # only replace that status with a traceback
        # signal's own core: the module around it builds enums (1 ms); no stubs
        import _signal  # type: ignore[import-not-found]

        _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
