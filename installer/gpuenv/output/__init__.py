"""How much gpuenv says: the global -v/-q flags, and the one line each external command gets
under -v (so a user can rerun exactly what gpuenv ran). What it never says, credentials in
index URLs, is `redact`'s."""

from __future__ import annotations

import sys
from collections.abc import Sequence

QUIET, NORMAL, VERBOSE = -1, 0, 1
_level = NORMAL


def set_verbosity(level: int) -> None:
    global _level
    _level = level


def quiet() -> bool:
    return _level <= QUIET


def log_command(argv: Sequence[object], what: str = "running") -> None:
    """Under -v, the command about to run, quoted so it can be pasted into a shell."""
    if _level >= VERBOSE:
        import shlex  # only under -v: not on every command's start-up

        from gpuenv.output.redact import redact_text

        line = redact_text(shlex.join(str(a) for a in argv))  # uv gets the password, not you
        print(f"gpuenv: {what}: {line}", file=sys.stderr, flush=True)


def debug(message: str) -> None:
    if _level >= VERBOSE:
        from gpuenv.output.redact import redact_text

        print(f"gpuenv: {redact_text(message)}", file=sys.stderr, flush=True)


def shown(text: object) -> str:
    """`text` safe to print on a terminal: control characters (an escape sequence from a
    lockfile, a newline in a store entry's name) appear as \\xNN escapes, never act."""
    return "".join(
        c
        if c.isprintable() or c == " "
        else f"\\x{ord(c):02x}"
        if ord(c) < 256
        else f"\\u{ord(c):04x}"
        for c in str(text)
    )
