"""The errors a user can cause, and the exit status each gets (see `gpuenv.cli`).

Every error meant for the user derives from GpuenvError and names its exit status as a class
attribute, so a rename cannot turn a user error into a traceback; anything else reaching the CLI
is a bug. Subclasses keep the builtin base they had (ValueError, OSError, ...), which callers
catch. `tests/house/test_errors.py` holds every exception class in the package to this.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing: see _entry
if TYPE_CHECKING:
    from typing import ClassVar, Optional

FAILURE_EXIT = 1  # a lock, install or verify that could not be done
USAGE_EXIT = 2  # the input is wrong: fix the command line or the file it names
INFEASIBLE_EXIT = 3  # the input is fine, but no stack satisfies it here
DATA_EXIT = 4  # the knowledge base itself is broken
NETWORK_EXIT = 5  # an index or channel could not be reached

EXIT_STATUSES = (FAILURE_EXIT, USAGE_EXIT, INFEASIBLE_EXIT, DATA_EXIT, NETWORK_EXIT)


class GpuenvError(Exception):
    """An error with a message for the user and a documented exit status."""

    exit_code: ClassVar[int] = FAILURE_EXIT


def exit_code(exc: BaseException) -> Optional[int]:
    """The exit status for a user-facing gpuenv error; None for anything else (a bug)."""
    return exc.exit_code if isinstance(exc, GpuenvError) else None
