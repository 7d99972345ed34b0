"""The errors a user can cause, and the exit status each gets (see `gpuenv.cli`)."""

from __future__ import annotations

from gpuenv.machine import MachineError
from gpuenv.recipes import RecipeError
from gpuenv.resolve import RequirementError, ResolveError, TargetError

USAGE_EXIT = 2  # the input is wrong: fix the command line or the file it names
INFEASIBLE_EXIT = 3  # the input is fine, but no stack satisfies it here
DATA_EXIT = 4  # the knowledge base itself is broken
NETWORK_EXIT = 5  # an index or channel could not be reached
FAILURE_EXIT = 1  # anything else that went wrong (a lock, an install, a verify)

USER_ERRORS = (MachineError, RequirementError, TargetError)


def exit_code(exc: Exception) -> int:
    from gpuenv.lock.errors import SourceUnreachableError, UnsatisfiableError

    if isinstance(exc, (ResolveError, UnsatisfiableError)):
        return INFEASIBLE_EXIT
    if isinstance(exc, SourceUnreachableError):
        return NETWORK_EXIT
    if isinstance(exc, RecipeError):
        return DATA_EXIT
    return USAGE_EXIT
