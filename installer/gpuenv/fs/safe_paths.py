"""Names and paths that come from untrusted input (lockfiles, index pages, wheelhouses).

A name taken from such input is a plain file name or it is refused; a path built from one is
checked to stay inside its folder after links are resolved; a file read from such input is a
regular file of bounded size. One small set of checks, used everywhere a name becomes a path.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path
from typing import BinaryIO

from gpuenv.errors import USAGE_EXIT, GpuenvError

MAX_NAME_BYTES = 255  # the usual file-system limit on one path component
_SHA256 = re.compile(r"[0-9a-f]{64}")
_MD5 = re.compile(r"[0-9a-f]{32}")
# Separators on any OS, NUL and control characters, and ':' (a drive or an NTFS stream)
_FORBIDDEN = re.compile(r"[/\\:\x00-\x1f\x7f]")


# Names Windows reserves for devices, whatever follows the first dot (`NUL.whl` opens the device).
# Lockfiles travel between platforms, so these are refused everywhere.
WINDOWS_DEVICE_NAMES = frozenset(
    ["con", "prn", "aux", "nul"] + [f"{d}{i}" for d in ("com", "lpt") for i in range(10)]
)


def is_windows_device(name: str) -> bool:
    return name.split(".")[0].strip().lower() in WINDOWS_DEVICE_NAMES


class UnsafePathError(GpuenvError, ValueError):
    """A name or path from untrusted input that is not safe to use: the message says which."""

    exit_code = USAGE_EXIT


def plain_name(name: object, what: str) -> str:
    """`name` if it is a plain file name (one path component, not `.` or `..`); else refused.

    `what` names the field it came from, for the message.
    """
    if not isinstance(name, str) or not name:
        raise UnsafePathError(f"{what} is {'empty' if name == '' else 'not a string'}")
    shown = repr(name) if len(name) < 120 else repr(name[:120]) + "..."
    if name in (".", ".."):
        raise UnsafePathError(f"{what} {shown} is not a file name")
    match = _FORBIDDEN.search(name)
    if match:
        raise UnsafePathError(
            f"{what} {shown} is not a plain file name (it holds {match.group()!r})"
        )
    if is_windows_device(name):
        raise UnsafePathError(f"{what} {shown} is a device name on Windows")
    if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        raise UnsafePathError(f"{what} {shown} is longer than {MAX_NAME_BYTES} bytes")
    return name


def inside(folder: Path, name: str, what: str, *subfolders: str) -> Path:
    """`folder / *subfolders / name`, refused unless every part is a plain name and the path,
    links resolved, is that very place (a link planted at any step cannot point the write or
    read elsewhere)."""
    parts = [plain_name(part, what) for part in (*subfolders, name)]
    root = Path(os.path.abspath(folder))
    path = root.joinpath(*parts)
    try:
        real, wanted = path.resolve(), root.resolve().joinpath(*parts)
    except (OSError, RuntimeError):  # a loop of links: RuntimeError before Python 3.13
        raise UnsafePathError(f"{what}: {path} is a loop of symbolic links") from None
    if real != wanted:
        raise UnsafePathError(f"{what}: {path} leads outside {root} (through a link)")
    return path


def is_sha256(value: object) -> bool:
    return isinstance(value, str) and _SHA256.fullmatch(value) is not None


def is_md5(value: object) -> bool:
    return isinstance(value, str) and _MD5.fullmatch(value) is not None


def is_regular_file(path: Path) -> bool:
    """A regular file at `path` itself: not a link (to one or not), a folder, a pipe or a
    device; False where nothing can be read there."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except (OSError, ValueError):  # ValueError: a NUL byte in the path
        return False


def open_regular(path: Path, what: str) -> BinaryIO:
    """`path` open for reading when it is a regular file (links followed); a pipe, a device, a
    socket or a folder is refused without blocking on it: the open does not wait for a FIFO's
    writer (O_NONBLOCK), and the kind is checked on what was opened (fstat), not on the name."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except IsADirectoryError:
        raise UnsafePathError(f"{what} {path} is a folder, not a regular file") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        reason = getattr(exc, "strerror", None) or str(exc)
        raise UnsafePathError(f"cannot read {what} {path}: {reason}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UnsafePathError(f"{what} {path} is {_kind(mode)}, not a regular file")
        return os.fdopen(os.dup(fd), "rb")
    finally:
        os.close(fd)


def read_bounded(path: Path, limit: int, what: str, *, follow_links: bool = True) -> bytes:
    """The bytes of a regular file no larger than `limit`; a pipe, a device, a folder or a file
    over the limit is refused without blocking on it or reading it whole. With
    `follow_links=False` a symbolic link at `path` itself is refused too (gpuenv's own state:
    nobody has a reason to plant a link there)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
        if os.path.islink(path):  # where O_NOFOLLOW does not exist (Windows)
            raise UnsafePathError(f"{what} {path} is a symbolic link; gpuenv does not follow it")
    try:
        fd = os.open(path, flags)
    except IsADirectoryError:
        raise UnsafePathError(f"{what} {path} is a folder, not a file") from None
    except OSError as exc:
        if not follow_links and exc.errno == errno.ELOOP:
            raise UnsafePathError(
                f"{what} {path} is a symbolic link; gpuenv does not follow it"
            ) from None
        raise UnsafePathError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UnsafePathError(
                f"{what} {path} is {_kind(mode)}, not a regular file; save it to a file first"
            )
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read(limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise UnsafePathError(
            f"{what} {path} is larger than {limit // (1 << 20)} MiB: too large to be one"
        )
    return data


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"
