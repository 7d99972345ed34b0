"""What can go wrong while installing, each with the one message a user needs."""

from __future__ import annotations


class InstallError(RuntimeError):
    """The environment could not be built; the existing one (if any) is untouched."""


class HashMismatchError(InstallError):
    """An artifact's content does not match the lockfile's hash."""


class EnvironmentNotFound(InstallError):
    pass
