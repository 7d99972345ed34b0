"""uv's look at the interpreter a lock names, started first thing, while gpuenv plans.

`uv pip compile` runs the interpreter it is given (`--python`: gpuenv's own, lock.pypi) to read
its version and platform before it resolves, unless uv's cache holds that answer: 60-75 ms of a
lock on a 2-core VM. With an empty cache (a new machine, a CI runner, after `uv cache clean`)
that run came after gpuenv's own start-up and planning, 70-90 ms. The `gpuenv` program (`_entry`,
through lock.last_request) starts `uv python find` on that interpreter first thing instead, where
it starts no uv run on the command line's last request (that run reads the interpreter itself),
and the lock waits for a look still under way rather than have its run make a second one.

A look only fills uv's cache, as the lock's own run would: it decides nothing, and whatever it
answers, or if it fails, the lock runs as it would without it. Only the program does this, never
an importer of gpuenv's library (nor a test calling the CLI in-process).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing: see _entry
if TYPE_CHECKING:
    from typing import Optional

    from gpuenv.uv.spawn import Process

# The longest a lock waits for a look still under way before it starts uv: its run would make
# the same look again from the start otherwise. A look that takes longer is stopped.
WAIT_S = 2.0

_look: Optional[tuple[list[str], Process]] = None


def uv_in_scripts() -> str:
    """The uv of gpuenv's own environment where gpuenv.uv.binary.find_uv looks first (the
    scripts folder of this interpreter's prefix), without the sysconfig and re it imports."""
    if os.name == "nt":
        return os.path.join(sys.prefix, "Scripts", "uv.exe")
    return os.path.join(sys.prefix, "bin", "uv")


def look_command(uv: str) -> list[str]:
    """uv's look at the interpreter lock.pypi names (sys.executable), as a question."""
    return [uv, "python", "find", "--no-project", sys.executable]


def start_early(uv: Optional[str] = None) -> None:
    """The look started, with `uv` (gpuenv's own by default: nothing if it has none there), in
    gpuenv's questions folder (fs.workdir.uv_question_place)."""
    global _look
    uv = uv or uv_in_scripts()
    from gpuenv.fs.workdir import WorkdirError, uv_question_place
    from gpuenv.uv.spawn import spawn

    cmd = look_command(uv)
    try:
        _, env = uv_question_place()
        # a group of its own: stopping it stops the interpreter it runs (uv.spawn.stop_group)
        _look = (cmd, spawn(cmd, env=env, stderr=False, new_session=os.name == "posix"))
    except (OSError, WorkdirError):  # no uv there, or no questions folder
        return  # the lock's run looks itself


def settle(uv: str) -> None:
    """Before the lock starts `uv`: the look made with that uv waited for (at most WAIT_S),
    one made with another uv stopped (its cache may not be this uv's); -v says which."""
    global _look
    look, _look = _look, None
    if look is None:
        return
    import subprocess

    from gpuenv.output import log_command
    from gpuenv.uv.spawn import stop_group

    cmd, process = look
    if cmd[0] != uv:
        stop_group(process)
        log_command(cmd, "stopped (the lock runs another uv)")
        return
    try:
        process.communicate(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        stop_group(process)
        log_command(cmd, f"stopped (not done within {WAIT_S:g} s)")
        return
    log_command(cmd, f"ran first, while gpuenv planned (exit {process.returncode})")


def stop() -> None:
    """Stop a look no lock waited for (the command ended before it started uv)."""
    global _look
    look, _look = _look, None
    if look is not None:
        from gpuenv.output import log_command
        from gpuenv.uv.spawn import stop_group

        stop_group(look[1])
        log_command(look[0], "stopped (the command ended before the lock ran uv)")
