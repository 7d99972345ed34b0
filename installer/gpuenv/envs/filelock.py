"""One install of an environment at a time: an OS file lock, released if the process dies.

The holder writes its pid into the lock file, so a process that has to wait can say for whom;
the wait is bounded by a timeout (`--lock-timeout`, or GPUENV_LOCK_TIMEOUT) when one is given.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

from gpuenv.envs.errors import InstallError, LockTimeout, StoreInputError

TIMEOUT_ENV = "GPUENV_LOCK_TIMEOUT"
_POLL = 0.2
_PID_OFFSET = 1  # byte 0 is the locked byte (Windows locks a byte range); the pid follows it

OnWait = Callable[[Optional[int]], None]


def timeout_from_env() -> Optional[float]:
    """GPUENV_LOCK_TIMEOUT in seconds; unset or empty: wait as long as it takes."""
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0:  # also refuses nan
        raise StoreInputError(f"{TIMEOUT_ENV}={raw!r}: give a number of seconds (0 or more)")
    return value


def holder_pid(path: Path) -> Optional[int]:
    """The pid the current holder wrote into the lock file, if it can be read."""
    try:
        with open(path, "rb") as f:
            f.seek(_PID_OFFSET)
            text = f.read(32).decode("ascii", "replace").strip("\0 \n")
    except OSError:
        return None
    return int(text) if text.isdigit() else None


@contextmanager
def exclusive(
    path: Path,
    *,
    timeout: Optional[float] = None,
    on_wait: OnWait = lambda _pid: None,
    what: str = "the environment",
) -> Iterator[None]:
    """Hold the lock at `path`; `on_wait(pid)` once if another process holds it first.

    Raises LockTimeout when `timeout` seconds pass without getting it (None: wait for ever).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if os.path.islink(path):  # a planted link would have us write our pid into its target
        raise InstallError(f"{path} is a link, not gpuenv's lock file; remove it and retry")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        if not _try_lock(fd):
            pid = holder_pid(path)
            on_wait(pid)
            deadline = None if timeout is None else time.monotonic() + timeout
            while not _try_lock(fd):
                if deadline is not None and time.monotonic() >= deadline:
                    by = f" (pid {pid})" if pid else ""
                    raise LockTimeout(
                        f"another gpuenv process{by} still holds the lock on {what} after"
                        f" {timeout:g}s ({path}); wait for it to finish, or give more time with"
                        f" --lock-timeout SECONDS or {TIMEOUT_ENV}"
                    )
                time.sleep(_POLL)
        _write_pid(fd)
        yield
    finally:
        os.close(fd)  # closing releases the lock on both systems


def _try_lock(fd: int) -> bool:
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _write_pid(fd: int) -> None:
    data = f"{os.getpid()}\n".encode()
    try:
        os.lseek(fd, _PID_OFFSET, os.SEEK_SET)
        os.write(fd, data)
        os.ftruncate(fd, _PID_OFFSET + len(data))
    except OSError:
        pass  # the pid is only for the message of a process that waits
