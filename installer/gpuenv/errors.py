"""The errors a user can cause, and the exit status each gets (see `gpuenv.cli`).

Looked up by class name along the exception's MRO, so the CLI imports no stage to handle its
errors: a stage's module is loaded already when its exception is raised.
"""

from __future__ import annotations

from typing import Optional

FAILURE_EXIT = 1  # a lock, install or verify that could not be done
USAGE_EXIT = 2  # the input is wrong: fix the command line or the file it names
INFEASIBLE_EXIT = 3  # the input is fine, but no stack satisfies it here
DATA_EXIT = 4  # the knowledge base itself is broken
NETWORK_EXIT = 5  # an index or channel could not be reached

_EXITS = {
    "MachineError": USAGE_EXIT,
    "RequirementError": USAGE_EXIT,
    "TargetError": USAGE_EXIT,
    "TargetPlatformError": USAGE_EXIT,
    "LockfileError": USAGE_EXIT,
    "LockNameError": USAGE_EXIT,
    "EnvironmentNotFound": USAGE_EXIT,
    "StoreInputError": USAGE_EXIT,
    "ResolveError": INFEASIBLE_EXIT,
    "UnsatisfiableError": INFEASIBLE_EXIT,
    "RecipeError": DATA_EXIT,
    "SourceUnreachableError": NETWORK_EXIT,
    "IndexConfigError": USAGE_EXIT,
    "LockError": FAILURE_EXIT,
    "CondaError": FAILURE_EXIT,
    "InstallError": FAILURE_EXIT,
    "HashMismatchError": FAILURE_EXIT,
    "VerifyError": USAGE_EXIT,
    "LabError": USAGE_EXIT,
    "UnsafePathError": USAGE_EXIT,
    "OutputPathError": USAGE_EXIT,
    "OutputWriteError": FAILURE_EXIT,
    "ActivationError": USAGE_EXIT,
    "CacheError": USAGE_EXIT,
    "KernelError": USAGE_EXIT,
}
_GPUENV_MODULE = "gpuenv."


def exit_code(exc: BaseException) -> Optional[int]:
    """The exit status for a user-facing gpuenv error; None for anything else (a bug)."""
    for cls in type(exc).__mro__:
        if cls.__module__.startswith(_GPUENV_MODULE) and cls.__name__ in _EXITS:
            return _EXITS[cls.__name__]
    return None
