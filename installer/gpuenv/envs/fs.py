"""File-system steps on gpuenv's own folders that never follow a link and never leave them.

Everything here works on the link itself (lstat, readlink), never on what it points to, and a
folder is deleted only after checking, with every link in its path resolved, that it is inside
the folder gpuenv owns (the store, or a `--prefix`'s versions folder).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import sys
from pathlib import Path
from typing import Optional

from gpuenv.envs.errors import InstallError

_WIN_LONG_PREFIX = "\\\\?\\"


def is_link(path: Path) -> bool:
    """A symlink, or (Windows) a junction: something whose target must not be followed."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISLNK(st.st_mode):
        return True
    tag = getattr(st, "st_reparse_tag", 0)
    return bool(tag) and tag == getattr(stat, "IO_REPARSE_TAG_MOUNT_POINT", -1)


def lexists(path: Path) -> bool:
    return os.path.lexists(path)


def link_target(path: Path) -> Optional[Path]:
    """Where a link points, read from the link itself (absolute, not resolved further)."""
    if not is_link(path):
        return None
    try:
        raw = os.readlink(path)
    except OSError:
        return None
    if raw.startswith(_WIN_LONG_PREFIX):
        raw = raw[len(_WIN_LONG_PREFIX) :]
    target = Path(raw)
    return Path(os.path.normpath(target if target.is_absolute() else path.parent / target))


def is_inside(path: Path, root: Path) -> bool:
    """True when `path`, with every link in it resolved, is strictly inside `root` (resolved)."""
    real = Path(os.path.realpath(path))
    base = Path(os.path.realpath(root))
    return real != base and real.is_relative_to(base)


def same_place(a: Path, b: Path) -> bool:
    """True when `a` and `b`, every link in them resolved, name one folder (either may not
    exist yet: what exists of each is resolved)."""
    return os.path.realpath(a) == os.path.realpath(b)


def is_real_dir(path: Path) -> bool:
    """A directory that is itself no link (a link to a directory is not one)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode) and not is_link(path)
    except OSError:
        return False


def remove_link(path: Path) -> None:
    """Remove a link (symlink or junction) itself; its target is not touched."""
    if not is_link(path):
        raise InstallError(f"{path} is not a link; refusing to remove it")
    if sys.platform == "win32":
        try:
            os.rmdir(path)  # a junction or directory symlink goes, never what it points to
            return
        except OSError:
            pass  # a file symlink
    os.unlink(path)


def remove_tree(path: Path, root: Path) -> None:
    """Delete a folder gpuenv built: a real folder below `root` with no link on the way there.

    Every component from `root` down to `path` is checked to be no link, so the folder deleted
    is the one named, inside `root` after resolution; shutil.rmtree then unlinks the links it
    finds inside instead of following them, so nothing outside `root` is reached.
    """
    if lexists(path):
        check_removable(path, root)
        shutil.rmtree(path)


def check_removable(path: Path, root: Path) -> None:
    """Raise InstallError unless remove_tree may delete `path` (see there)."""
    root = Path(os.path.abspath(root))
    path = Path(os.path.abspath(path))
    if path == root or not path.is_relative_to(root):
        raise InstallError(f"{path} is outside {root}; refusing to delete it")
    step = root
    for part in path.relative_to(root).parts:
        step = step / part
        if part in (".", "..") or not is_real_dir(step):
            raise InstallError(f"{step} is a link or not a folder; refusing to delete {path}")
    if not is_inside(path, root):
        raise InstallError(f"{path} resolves outside {root}; refusing to delete it")


def remove_tree_quietly(path: Path, root: Path) -> None:
    """remove_tree for clean-up after a failure: never raises, never leaves `root`."""
    with contextlib.suppress(OSError, InstallError):
        remove_tree(path, root)


def disk_error(exc: OSError, what: str) -> InstallError:
    """One actionable message for an OSError while writing an environment."""
    from gpuenv.fs.disk_errors import disk_advice

    elsewhere = "install elsewhere (set GPUENV_HOME, or use --prefix DIR on another disk)"
    return InstallError(disk_advice(exc.filename or what, exc, elsewhere=elsewhere))


def removal_error(exc: OSError, what: str) -> InstallError:
    """One actionable message for an OSError while removing what gpuenv built."""
    where = exc.filename or what
    return InstallError(
        f"could not remove {where} ({exc.strerror or exc}); nothing outside gpuenv's folders was"
        " touched: make the store writable and run `gpuenv envs clean`"
    )
