"""Writing an output file (a lockfile, a pylock.toml) so that it is never half-written.

The content goes to a temporary file beside the target and is renamed onto it in one step, and
only onto a regular file or a path that does not exist yet: a rename would replace a device
(`-o /dev/null` as root) or a symbolic link with a regular file, so those are refused before any
work is done (exit 2), never written through. A full disk or a read-only folder ends in one
message naming the path and what to do (exit 1), with no temporary file left behind.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from gpuenv.errors import FAILURE_EXIT, USAGE_EXIT, GpuenvError


class OutputPathError(GpuenvError, ValueError):
    """The output path names something gpuenv will not replace (exit 2)."""

    exit_code = USAGE_EXIT


class OutputWriteError(GpuenvError, OSError):
    """The output could not be written (exit 1); the message names the path and the fix."""

    exit_code = FAILURE_EXIT


def check_output_path(path: Path) -> None:
    """Refuse an output that exists and is not a regular file (checked before a lock's work)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise OutputWriteError(_advice(path, exc)) from None
    if stat.S_ISREG(mode):
        return
    kind = (
        "a symbolic link"
        if stat.S_ISLNK(mode)
        else "a folder"
        if stat.S_ISDIR(mode)
        else "a pipe (FIFO)"
        if stat.S_ISFIFO(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "not a regular file"
    )
    raise OutputPathError(
        f"{path} is {kind}; gpuenv writes its output only to a regular file or a new path,"
        " so it never replaces a device or a link: name a file"
        + (f" (the link points to {os.readlink(path)})" if stat.S_ISLNK(mode) else "")
    )


def atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    """Call `write(staged)` to write the content under the target's own name in a private
    folder beside it, then move it onto `path` in one rename."""
    path = Path(path)
    check_output_path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name[:40]}.gpuenv-")
    except OSError as exc:
        raise OutputWriteError(_advice(path, exc)) from None
    try:
        staged = Path(tmp) / path.name
        write(staged)
        with staged.open("rb") as fh:
            os.fsync(fh.fileno())
        check_output_path(path)  # again just before the rename: something may have appeared
        os.replace(staged, path)
    except OSError as exc:
        if isinstance(exc, OutputWriteError):
            raise
        raise OutputWriteError(_advice(path, exc)) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def atomic_write_text(path: Path, text: str) -> None:
    def write(staged: Path) -> None:
        staged.write_text(text, encoding="utf-8")

    atomic_write(path, write)


def _advice(path: Path, exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        fix = "free some space on that disk, or write the file elsewhere (-o PATH)"
    elif exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        fix = (
            "the folder is not writable: write the file elsewhere (-o PATH) or fix its permissions"
        )
    else:
        fix = "write the file elsewhere (-o PATH)"
    return f"cannot write {path}: {reason}; {fix}. Nothing was written there."
