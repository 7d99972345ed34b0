"""What can go wrong while locking, each with the one message a user needs."""

from __future__ import annotations


class LockError(RuntimeError):
    """The lock cannot be made; the message says why and what to do."""


class UnsatisfiableError(LockError):
    """The requirements conflict: the message names which with which."""


class SourceUnreachableError(LockError):
    """An index or channel could not be reached: the message names it."""


class LockfileError(LockError):
    """A lockfile that cannot be read: the message names the file and the field (exit 2)."""


class LocalPathsError(LockError):
    """A lockfile for another machine would name files only this machine has (exit 1)."""
