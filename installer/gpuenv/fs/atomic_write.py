"""Writing an output file (a lockfile, a pylock.toml) so that it is never half-written.

The content goes to a temporary file beside the target and is renamed onto it in one step, and
only onto a regular file or a path that does not exist yet: a rename would replace a device
(`-o /dev/null` as root) or a symbolic link with a regular file, so those are refused before any
work is done (exit 2), never written through. A full disk or a read-only folder ends in one
message naming the path and what to do (exit 1), with no temporary file left behind.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Optional

from gpuenv.errors import FAILURE_EXIT, USAGE_EXIT, GpuenvError


class OutputPathError(GpuenvError, ValueError):
    """The output path names something gpuenv will not replace (exit 2)."""

    exit_code = USAGE_EXIT


class OutputWriteError(GpuenvError, OSError):
    """The output could not be written (exit 1); the message names the path and the fix,
    `reason` the system's words alone (for callers whose fix is not `-o PATH`)."""

    exit_code = FAILURE_EXIT
    reason = ""
    cause: Optional[OSError] = None  # the system's error, for callers with their own advice


def _write_error(path: Path, exc: OSError) -> OutputWriteError:
    error = OutputWriteError(_advice(path, exc))
    error.reason = exc.strerror or str(exc)
    error.cause = exc
    return error


def check_output_path(path: Path) -> None:
    """Refuse an output that exists and is not a regular file (checked before a lock's work)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise _write_error(path, exc) from None
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


def check_no_links_below(root: Path, path: Path) -> None:
    """Refuse `path` unless it lies under `root` with no symbolic link among the folders
    between them. gpuenv's own folders (the store's `.setup`, a cache kind, a kernel's folder)
    hold no links of gpuenv's making, so one found there was planted, and writing through it
    would put gpuenv's files into (or over) someone else's. `root` itself may be a link: the
    user chose where it lives."""
    top = Path(os.path.abspath(root))
    target = Path(os.path.abspath(path))
    try:
        parts = target.relative_to(top).parts
    except ValueError:
        raise OutputPathError(f"{target} is not inside {top}") from None
    current = top
    for part in parts[:-1]:
        current = current / part
        if os.path.islink(current):
            raise OutputPathError(
                f"{current} is a symbolic link inside gpuenv's folder {top}; gpuenv does not"
                f" write through it (it points to {os.readlink(current)}): remove the link"
            )


def atomic_write(
    path: Path,
    write: Callable[[Path], None],
    *,
    root: Optional[Path] = None,
    mode: Optional[int] = None,
    durable: bool = True,
) -> None:
    """Call `write(staged)` to write the content under the target's own name in a private
    folder beside it, then move it onto `path` in one rename. With `root`, every folder from
    `root` down to the target's must not be a link (checked before and again just before the
    rename); the new file gets `mode` when given (else the umask decides). `durable=False`
    skips the flush to disk before the rename: only for a cache entry whose torn form (after a
    power loss) its reader refuses, as it refuses a JSON text cut short."""
    import shutil  # these two not at the top: `gpuenv lock` checks its -o before it starts uv,
    import tempfile  # and writes only after uv answers

    path = Path(path)
    check_output_path(path)
    if root is not None:
        check_no_links_below(root, path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name[:40]}.gpuenv-")
    except OSError as exc:
        raise _write_error(path, exc) from None
    try:
        staged = Path(tmp) / path.name
        write(staged)
        if durable:
            with staged.open("rb") as fh:
                os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(staged, mode)
        check_output_path(path)  # again just before the rename: something may have appeared
        if root is not None:
            check_no_links_below(root, path)
        os.replace(staged, path)
    except OSError as exc:
        if isinstance(exc, OutputWriteError):
            raise
        raise _write_error(path, exc) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def atomic_write_text(
    path: Path,
    text: str,
    *,
    root: Optional[Path] = None,
    mode: Optional[int] = None,
    durable: bool = True,
) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), root=root, mode=mode, durable=durable)


def atomic_write_bytes(
    path: Path,
    data: bytes,
    *,
    root: Optional[Path] = None,
    mode: Optional[int] = None,
    durable: bool = True,
) -> None:
    def write(staged: Path) -> None:
        staged.write_bytes(data)

    atomic_write(path, write, root=root, mode=mode, durable=durable)


def _advice(path: Path, exc: OSError) -> str:
    from gpuenv.fs.disk_errors import disk_advice

    return disk_advice(
        path,
        exc,
        elsewhere="write the file elsewhere (-o PATH)",
        outcome="Nothing was written there.",
    )
