"""gpuenv's home folder, and private work folders inside it for the files gpuenv hands to the
tools it drives (uv's temporary project, an install's requirement list).

Never a shared temporary folder: anyone can write `/tmp`, and uv looks upwards from its project
and its working folder for a workspace root and for configuration, so a `pyproject.toml` or a
`uv.toml` planted above a `/tmp/gpuenv-*` folder would steer a lock. The work root is made only
for this user (mode 0700), refused when it is a link or someone else can write it, and each work
folder is named after the process that made it, so `gpuenv envs clean` can tell a leftover of a
killed run from a folder still in use.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Optional

from gpuenv.errors import USAGE_EXIT, GpuenvError

HOME_ENV = "GPUENV_HOME"
WORK = "work"


class WorkdirError(GpuenvError):
    """gpuenv's work folder is not safe to use (a link, someone else's, writable by others)."""

    exit_code = USAGE_EXIT


def gpuenv_home() -> Path:
    """GPUENV_HOME, or the user's data folder for gpuenv: the store and the work folders."""
    override = os.environ.get(HOME_ENV)
    if override:
        # absolute at once: a relative GPUENV_HOME would make links and records that point
        # somewhere else from every other folder
        return Path(os.path.abspath(os.path.expanduser(override)))
    from platformdirs import user_data_dir

    return Path(user_data_dir("gpuenv", appauthor=False))


def work_root() -> Path:
    return gpuenv_home() / WORK


def checked_work_root() -> Path:
    """The work root, made for this user alone if absent; refused if anyone else could plant
    files in it."""
    root = work_root()
    try:
        root.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            root.mkdir(mode=0o700)
        from gpuenv.fs.private_read import folder_reason

        reason = folder_reason(root)
    except OSError as exc:
        raise WorkdirError(
            f"cannot make gpuenv's work folder {root}: {exc.strerror or exc}"
        ) from exc
    if reason:
        raise WorkdirError(
            f"gpuenv's work folder {root} is not safe to use: {reason}. Remove it (gpuenv makes"
            f" it again, for this user only) or set {HOME_ENV} to a folder of your own"
        )
    return root


@contextlib.contextmanager
def private_workdir(kind: str) -> Iterator[Path]:
    """A fresh folder only this user can use, removed afterwards (whatever happens inside)."""
    root = checked_work_root()
    path = Path(tempfile.mkdtemp(prefix=f"{kind}-{os.getpid()}-", dir=root))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def uv_workdir(kind: str) -> Iterator[Path]:
    """A private work folder to run uv in: uv reads project configuration (uv.toml, a
    pyproject.toml's [tool.uv]) from its working folder upwards, and the empty uv.toml here is
    the first it finds, so nothing planted above the user's working folder configures it."""
    with private_workdir(kind) as path:
        (path / "uv.toml").write_text("# gpuenv: uv's configuration search ends here\n")
        yield path


def stale_workdirs(root: Optional[Path] = None) -> list[Path]:
    """Work folders whose process is gone (a killed run's leftovers): `envs clean` removes them.
    Only real folders named `<kind>-<pid>-<random>` count; links and other entries are left."""
    root = root or work_root()
    try:
        entries = list(os.scandir(root))
    except OSError:
        return []
    out = []
    for entry in entries:
        parts = entry.name.split("-")
        if len(parts) < 3 or not parts[1].isdigit() or not entry.is_dir(follow_symlinks=False):
            continue
        if not _alive(int(parts[1])):
            out.append(Path(entry.path))
    return sorted(out)


def _alive(pid: int) -> bool:
    if pid == os.getpid() or os.name == "nt":
        return True  # Windows: os.kill(pid, 0) would send that process a Ctrl-C
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError, OverflowError):
        return True  # someone's process: not ours to judge
    return True
