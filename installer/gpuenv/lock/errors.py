"""What can go wrong while locking, each with the one message a user needs."""

from __future__ import annotations

from gpuenv.errors import FAILURE_EXIT, INFEASIBLE_EXIT, NETWORK_EXIT, USAGE_EXIT, GpuenvError


class LockError(GpuenvError, RuntimeError):
    """The lock cannot be made; the message says why and what to do."""

    exit_code = FAILURE_EXIT


class UnsatisfiableError(LockError):
    """The requirements conflict: the message names which with which."""

    exit_code = INFEASIBLE_EXIT


class SourceUnreachableError(LockError):
    """An index or channel could not be reached: the message names it."""

    exit_code = NETWORK_EXIT


class LockfileError(LockError):
    """A lockfile that cannot be read: the message names the file and the field (exit 2)."""

    exit_code = USAGE_EXIT


class LocalPathsError(LockError):
    """A lockfile for another machine would name files only this machine has (exit 1)."""


class UntrustedOriginError(LockfileError):
    """A lockfile names a file from somewhere the installing user did not configure (exit 2):
    the lockfile-origin rule, gpuenv.envs.origins."""
