"""Reading a file that only its owner may have written: ssh's rule for its keys, for data that
runs code when it is loaded (a pickle).

The file and the folder it is in must belong to the user running gpuenv and be writable by
nobody else (no group or other write bit); the file must be a regular file, not a link, a pipe or
a device, of bounded size. Anything else is "no such file" to the caller, which rebuilds what it
wanted: someone who can write a shared GPUENV_CACHE_DIR (or a CI cache restored from another
job) must not be able to run code as the user, nor hang every command with a FIFO.

The folder is opened first (not following a link) and the file through it, so the folder that
was checked is the one the file is read from. On Windows, where POSIX owners and mode bits do
not exist, only the kind and size rules apply.
"""

from __future__ import annotations

import os
import stat
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing: see _entry
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Optional, Union

    Folder = Union[str, Path]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_BINARY = getattr(os, "O_BINARY", 0)


ABSENT = "absent"


def why_not_private(info: os.stat_result, windows: bool = sys.platform == "win32") -> Optional[str]:
    """Why a file or folder with this status may have been written by someone else; None if
    only its owner, the user running gpuenv, can have."""
    if windows:
        return None
    if info.st_uid != os.geteuid():
        return f"it belongs to uid {info.st_uid}, not to this user"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"others can write it (mode {stat.filemode(info.st_mode)})"
    return None


def read_private(folder: Folder, name: str, limit: int) -> tuple[Optional[bytes], str]:
    """The bytes of `folder/name` when the rules above hold, else None; with the reason (for a
    -v line; ABSENT when there is no such file or folder) either way."""
    path = os.path.join(folder, name)
    use_dir_fd = os.open in os.supports_dir_fd and _DIRECTORY != 0
    dir_fd: Optional[int] = None
    try:
        if use_dir_fd:
            dir_fd = os.open(folder, os.O_RDONLY | _DIRECTORY | _NOFOLLOW)
            reason = why_not_private(os.fstat(dir_fd))
        else:
            reason = folder_reason(folder)
        if reason:
            return None, f"{folder}: {reason}"
        flags = os.O_RDONLY | _NONBLOCK | _NOFOLLOW | _BINARY
        if not use_dir_fd and os.path.islink(path):
            return None, f"{path} is a link"
        fd = os.open(name, flags, dir_fd=dir_fd) if use_dir_fd else os.open(path, flags)
    except FileNotFoundError:
        return None, ABSENT
    except OSError as exc:
        return None, f"{path}: {exc.strerror or exc}"
    finally:
        if dir_fd is not None:
            os.close(dir_fd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, f"{path} is not a regular file"
        reason = why_not_private(info)
        if reason:
            return None, f"{path}: {reason}"
        if info.st_size > limit:
            return None, f"{path} is larger than {limit} bytes"
        chunks = []
        left = limit + 1
        # the whole file in one read, and no copy to join it (the knowledge base's 1.5 MB: 1 ms
        # of every resolve), unless it grows meanwhile; never more than the limit, plus one byte
        want = min(left, info.st_size + 1)
        while left > 0:
            chunk = os.read(fd, want)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
            want = min(left, 1 << 20)
    except OSError as exc:
        return None, f"{path}: {exc.strerror or exc}"
    finally:
        os.close(fd)
    data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    if len(data) > limit:
        return None, f"{path} is larger than {limit} bytes"
    return data, "ok"


def folder_reason(folder: Folder) -> Optional[str]:
    """Why a folder may have been written by someone else (a link, not a folder, another
    owner, writable by others), or None."""
    info = os.lstat(folder)
    if stat.S_ISLNK(info.st_mode):
        return "it is a link"
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a folder"
    return why_not_private(info)
