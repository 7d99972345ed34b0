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

import os
import sys

from gpuenv.errors import USAGE_EXIT, GpuenvError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing: see _entry
if TYPE_CHECKING:
    from collections.abc import Iterator
    from contextlib import AbstractContextManager
    from pathlib import Path
    from typing import Optional

# Making a work folder needs only os (text paths): `gpuenv lock` makes one for the uv it starts
# first thing, before pathlib, tempfile, shutil or even contextlib are imported
# (lock.last_request).

HOME_ENV = "GPUENV_HOME"
WORK = "work"
QUESTIONS = "uv-questions"  # in the work root: where uv answers gpuenv's questions
# uv reads project configuration (uv.toml, a pyproject.toml's [tool.uv]) from its working folder
# upwards; an empty uv.toml in the folder gpuenv runs it in is the first it finds, so nothing
# planted above (above GPUENV_HOME too, when that lies in a shared folder) configures it
_END_OF_SEARCH = "# gpuenv: uv's configuration search ends here\n"


class WorkdirError(GpuenvError):
    """gpuenv's work folder is not safe to use (a link, someone else's, writable by others)."""

    exit_code = USAGE_EXIT


def gpuenv_home() -> Path:
    """GPUENV_HOME, or the user's data folder for gpuenv: the store and the work folders."""
    from pathlib import Path

    return Path(gpuenv_home_text())


def gpuenv_home_text(platform: str = sys.platform) -> str:
    """gpuenv_home() as text."""
    override = os.environ.get(HOME_ENV)
    if override:
        # absolute at once: a relative GPUENV_HOME would make links and records that point
        # somewhere else from every other folder
        return os.path.abspath(os.path.expanduser(override))
    if platform.startswith("linux"):
        from gpuenv.fs.xdg import xdg_folder

        return xdg_folder("XDG_DATA_HOME", "~/.local/share")
    from platformdirs import user_data_dir

    return user_data_dir("gpuenv", appauthor=False)


def work_root() -> Path:
    return gpuenv_home() / WORK


def checked_work_root() -> Path:
    """The work root, made for this user alone if absent; refused if anyone else could plant
    files in it."""
    from pathlib import Path

    return Path(checked_work_root_text())


def checked_work_root_text() -> str:
    """checked_work_root() as text."""
    root = os.path.join(gpuenv_home_text(), WORK)
    try:
        os.makedirs(os.path.dirname(root), exist_ok=True)
        try:  # noqa: SIM105 - contextlib is not imported on this path (see above)
            os.mkdir(root, 0o700)
        except FileExistsError:
            pass  # checked below, as a new one is
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


def make_workdir(kind: str) -> str:
    """A fresh folder only this user can use, `<kind>-<pid>-<random>` in the checked work root
    (stale_workdirs reads the pid); the caller removes it (remove_workdir)."""
    root = checked_work_root_text()
    for _ in range(100):
        path = os.path.join(root, f"{kind}-{os.getpid()}-{os.urandom(5).hex()}")
        try:
            os.mkdir(path, 0o700)  # fails on anything already there, a planted link included
        except FileExistsError:
            continue
        return path
    raise WorkdirError(f"cannot make a work folder in {root}: every name tried was taken")


def uv_environment(work: str) -> dict[str, str]:
    """This process's environment for uv run in `work`, with UV_WORKING_DIR naming it: uv looks
    for configuration and a workspace root from its working folder, and a UV_WORKING_DIR of the
    user's would move it from `work` to wherever that names."""
    return {**os.environ, "UV_WORKING_DIR": work}


def uv_question_place() -> tuple[str, dict[str, str]]:
    """The folder, and the environment (uv_environment), for a uv that only answers a question
    (`uv python find`, `uv cache dir`, its help): QUESTIONS in gpuenv's checked work root, made
    once and kept, where uv's search for configuration ends. Never the user's working folder, nor
    one UV_WORKING_DIR names: a `uv.toml` there, or in a folder above, would shape the answer
    (which interpreter the install builds on, where uv's cache is)."""
    folder = os.path.join(checked_work_root_text(), QUESTIONS)
    try:
        try:  # noqa: SIM105 - contextlib is not imported on this path (see above)
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass  # checked below, as a new one is
        from gpuenv.fs.private_read import folder_reason

        reason = folder_reason(folder)
        if not reason:
            _end_uv_search(folder)
    except OSError as exc:
        raise WorkdirError(f"cannot make {folder}: {exc.strerror or exc}") from exc
    if reason:
        raise WorkdirError(
            f"{folder} is not safe to use: {reason}. Remove it (gpuenv makes it again)"
        )
    return folder, uv_environment(folder)


def _end_uv_search(folder: str) -> None:
    """The empty uv.toml that ends uv's search for configuration in `folder` (a private one: a
    file there already is the user's own, and left alone)."""
    try:
        fd = os.open(
            os.path.join(folder, "uv.toml"),
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
            0o600,
        )
    except FileExistsError:
        return
    with os.fdopen(fd, "w") as fh:
        fh.write(_END_OF_SEARCH)


def remove_workdir(path: str) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def private_workdir(kind: str) -> AbstractContextManager[Path]:
    """A fresh folder only this user can use, removed afterwards (whatever happens inside)."""
    import contextlib  # not at the top: the early uv start (make_workdir) goes without it
    from pathlib import Path

    @contextlib.contextmanager
    def made() -> Iterator[Path]:
        path = make_workdir(kind)
        try:
            yield Path(path)
        finally:
            remove_workdir(path)

    return made()


def uv_workdir(kind: str) -> AbstractContextManager[Path]:
    """A private work folder to run uv in, where uv's search for configuration ends (see
    _END_OF_SEARCH)."""
    import contextlib

    @contextlib.contextmanager
    def made() -> Iterator[Path]:
        with private_workdir(kind) as path:
            _end_uv_search(str(path))
            yield path

    return made()


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
            out.append(root / entry.name)
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
