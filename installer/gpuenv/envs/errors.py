"""What can go wrong while installing, each with the one message a user needs."""

from __future__ import annotations

from gpuenv.errors import FAILURE_EXIT, USAGE_EXIT, GpuenvError


class InstallError(GpuenvError, RuntimeError):
    """The environment could not be built; the existing one (if any) is untouched."""

    exit_code = FAILURE_EXIT


class HashMismatchError(InstallError):
    """An artifact's content does not match the lockfile's hash."""

    exit_code = FAILURE_EXIT


class EnvironmentNotFound(InstallError):
    exit_code = USAGE_EXIT


class CorruptEnvironment(EnvironmentNotFound):
    """A store entry whose metadata is missing, unreadable or of the wrong shape."""


class StoreInputError(InstallError):
    """What the user gave cannot be used (a bad name, a foreign link, a bad setting): exit 2."""

    exit_code = USAGE_EXIT


class LockTimeout(InstallError):
    """Another gpuenv process held the environment's lock for longer than the timeout."""
