"""The errors a user can cause, and the exit status each gets (see `gpuenv.cli`)."""

from __future__ import annotations

from gpuenv.machine import MachineError
from gpuenv.recipes import RecipeError
from gpuenv.resolve import RequirementError, ResolveError, TargetError

USAGE_EXIT = 2  # the input is wrong: fix the command line or the file it names
INFEASIBLE_EXIT = 3  # the input is fine, but no stack satisfies it here
DATA_EXIT = 4  # the knowledge base itself is broken

USER_ERRORS: tuple[type[Exception], ...] = (MachineError, RequirementError, TargetError)


def exit_code(exc: Exception) -> int:
    if isinstance(exc, ResolveError):
        return INFEASIBLE_EXIT
    if isinstance(exc, RecipeError):
        return DATA_EXIT
    return USAGE_EXIT
