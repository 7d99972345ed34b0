"""gpuenv's cache folder: derived data only, safe to delete at any time. The wheels gpuenv
installs live in uv's cache, which is the user's: gpuenv reports its size, never empties it.

A wheel of gpuenv also ships a read-only cache (`gpuenv/_cache/`, written at build time by
hatch_build.py: the parsed knowledge base), so the first run after an install does not parse
the knowledge base's TOML. Entries are keyed by a hash of their inputs, so a packaged entry is
used only when it matches exactly.
"""

from __future__ import annotations

import os
import sys

from gpuenv.errors import USAGE_EXIT, GpuenvError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing: see _entry
if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path
    from types import ModuleType
    from typing import Any, Optional

# Reading an entry (every command's start: the knowledge base, the dataclass code) works on
# text paths: pathlib and pickle's module would be 7 ms of `gpuenv resolve`'s 50 ms floor. Nor
# is pickle's loader imported before it is used: a lock reads its last request first.

CACHE_ENV = "GPUENV_CACHE_DIR"
PACKAGED = os.path.join(os.path.dirname(os.path.realpath(__file__)), "_cache")


def cache_dir(platform: str = sys.platform) -> Path:
    from pathlib import Path

    return Path(cache_root(platform))


def cache_root(platform: str = sys.platform) -> str:
    """cache_dir() as text."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return override
    if platform.startswith("linux"):
        from gpuenv.fs.xdg import xdg_folder

        return xdg_folder("XDG_CACHE_HOME", "~/.cache")
    from platformdirs import user_cache_dir

    return user_cache_dir("gpuenv", appauthor=False)


# The parsed knowledge base is about 1 MB; a file far larger is not one gpuenv wrote.
MAX_PICKLE_BYTES = 64 << 20


def read_pickle(kind: str, key: str) -> Optional[Any]:
    """The cached value: the packaged copy if the wheel has it, else the user's cache's.

    A pickle runs code when loaded, so the user's copy is read only when it and its folder
    belong to the user and nobody else can write them, and only from a regular file (never a
    link, a FIFO or a device: fs.private_read). Otherwise it is ignored and the caller rebuilds.
    """
    name = f"{key}.pickle"
    try:
        # part of gpuenv's own installed files: whoever can write it can write gpuenv's code
        with open(os.path.join(PACKAGED, kind, name), "rb") as fh:
            return _unpickler().load(fh)
    except OSError:
        pass  # absent
    except _stale_pickle():
        pass  # written by another gpuenv version: the user's cache, or rebuild it
    raw = read_entry(kind, name, MAX_PICKLE_BYTES)
    if raw is None:
        return None
    try:
        return _unpickler().loads(raw)
    except _stale_pickle():
        return None


def loads_pickle(data: bytes, shared: Sequence[Any] = ()) -> Any:
    """pickle.loads, without importing the pickle module around it; a persistent id in `data`
    is a place in `shared` (gpuenv.recipes.deferred.Pickled.of)."""
    if not shared:
        return _unpickler().loads(data)
    import io

    unpickler = _unpickler().Unpickler(io.BytesIO(data))
    unpickler.persistent_load = shared.__getitem__
    return unpickler.load()


def _unpickler() -> ModuleType:
    """pickle's own loader: the pickle module around it imports much more."""
    try:
        import _pickle
    except ImportError:  # pragma: no cover - an interpreter without the C accelerator
        import pickle as _pickle  # type: ignore[no-redef]
    return _pickle


def read_entry(kind: str, name: str, limit: int) -> Optional[bytes]:
    """The bytes of one entry of the user's cache, for data that runs code when used (a pickle,
    compiled code, a command to start): only when it and its folder belong to the user and
    nobody else can write them, from a regular file of at most `limit` bytes
    (fs.private_read). None otherwise (said under -v), and the caller rebuilds."""
    from gpuenv.fs.private_read import ABSENT, read_private

    raw, why = read_private(os.path.join(cache_root(), kind), name, limit)
    if raw is None and why != ABSENT:
        from gpuenv.output import debug

        debug(f"cache entry not used: {why}")
    return raw


def _stale_pickle() -> tuple[type[Exception], ...]:
    """What loading a pickle written by another version of gpuenv (or of Python) raises."""
    return (
        _unpickler().UnpicklingError,
        EOFError,
        AttributeError,
        ImportError,
        TypeError,
        ValueError,
    )


def write_pickle(kind: str, key: str, value: Any) -> None:
    import pickle

    write_entry(kind, f"{key}.pickle", pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


def write_entry(kind: str, name: str, data: bytes) -> None:
    """Write one entry of the user's cache atomically, readable by the user alone (read_entry
    trusts nothing else); never fails the command that writes it."""
    from gpuenv.fs.atomic_write import OutputPathError, atomic_write_bytes

    try:
        folder = kind_dir(kind)
        _keep_private(folder)
        atomic_write_bytes(folder / name, data, root=cache_dir(), mode=0o600)
    except (OSError, CacheError, OutputPathError):
        pass  # a read-only home (or a planted link) must not stop a command; it is only slower


def kind_dir(kind: str) -> Path:
    """gpuenv's folder for one kind of cached data, made private if new, and the cache tagged.
    A link there (planted, or a folder someone redirected) is refused: gpuenv's files would be
    written into wherever it points."""
    root = cache_dir()
    folder = root / kind
    if os.path.islink(folder):
        raise CacheError(
            f"{folder} is a symbolic link (to {os.readlink(folder)}); gpuenv does not write its"
            " cache through a link: remove it (`gpuenv cache clean` does)"
        )
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    tag_cache(root)
    return folder


def _keep_private(folder: Path) -> None:
    """Drop group and other write from gpuenv's own cache folder (one made before this rule,
    under a umask of 002, is group-writable, and read_pickle would never trust it); a link or
    another user's folder is left alone (and never read)."""
    import stat

    info = os.lstat(folder)
    if (
        sys.platform != "win32"
        and stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.geteuid()
        and info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    ):
        os.chmod(folder, stat.S_IMODE(info.st_mode) & ~(stat.S_IWGRP | stat.S_IWOTH))


# The Cache Directory Tagging Specification's tag: backup tools skip the folder, and `cache clean`
# empties only a folder that carries it (GPUENV_CACHE_DIR pointed at a home folder must not
# empty that home).
TAG_NAME = "CACHEDIR.TAG"
TAG_TEXT = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by gpuenv.\n"
)


# What gpuenv writes here (artifacts: checked copies of file:// conda packages; rattler:
# py-rattler's package cache; recipes: the parsed knowledge base; index-probe: what an index
# said it has). `cache clean` removes these and nothing else.
KNOWN_KINDS = frozenset(
    {
        "artifacts",
        "rattler",
        "recipes",
        "index-probe",
        "wheel-records",
        "code",  # dataclass_code
        "lock-requests",  # lock.last_request
        "install-pythons",  # envs.early_python
    }
)


class CacheError(GpuenvError):
    exit_code = USAGE_EXIT


def tag_cache(folder: Path) -> None:
    from gpuenv.fs.atomic_write import OutputPathError, atomic_write_text

    tag = folder / TAG_NAME
    if not os.path.lexists(tag):  # a link there is left alone: never written through
        import contextlib

        with contextlib.suppress(OSError, OutputPathError):
            atomic_write_text(tag, TAG_TEXT, root=folder)


def has_own_tag(folder: Path) -> bool:
    """Whether `folder` carries gpuenv's own tag: a regular file (not a link) with gpuenv's
    text. Other tools tag their caches with the same name (uv does): those are not gpuenv's."""
    from gpuenv.fs.safe_paths import UnsafePathError, read_bounded

    try:
        return read_bounded(folder / TAG_NAME, 4096, TAG_NAME, follow_links=False) == (
            TAG_TEXT.encode("ascii")
        )
    except UnsafePathError:
        return False


def cache_usage() -> dict[str, int]:
    """Bytes per top-level entry of the cache (links are counted, never followed)."""
    root = cache_dir()
    if not root.is_dir():
        return {}
    return {
        entry.name: _size(entry)
        for entry in sorted(root.iterdir(), key=lambda e: e.name)
        if entry.name != TAG_NAME
    }


def clean_cache(dry_run: bool = False) -> int:
    """Remove what gpuenv wrote in its cache (KNOWN_KINDS), nothing else; the bytes freed.

    The folder must carry gpuenv's own tag, or hold nothing but gpuenv's kinds: another tool's
    tagged cache (uv's) or a folder someone named in GPUENV_CACHE_DIR by mistake is left whole.
    """
    root = cache_dir()
    if not root.exists():
        return 0
    if root.is_symlink() or not root.is_dir():
        raise CacheError(f"{root} is not a folder; set {CACHE_ENV} to gpuenv's cache folder")
    names = {e.name for e in root.iterdir()}
    if not has_own_tag(root) and (TAG_NAME in names or not names <= KNOWN_KINDS):
        whose = (
            f"its {TAG_NAME} is not gpuenv's (another tool's cache?)"
            if TAG_NAME in names
            else f"it has no {TAG_NAME}"
        )
        raise CacheError(
            f"{root}: {whose}, so it may not be gpuenv's cache: nothing was removed."
            f" Check {CACHE_ENV}; delete the folder by hand if it really is the cache."
        )
    import shutil

    freed = 0
    for entry in root.iterdir():
        if entry.name not in KNOWN_KINDS:
            continue  # not gpuenv's to remove, even in its own folder
        freed += _size(entry)
        if dry_run:
            continue
        if entry.is_symlink() or not entry.is_dir():
            entry.unlink()
        else:
            shutil.rmtree(entry)  # does not follow links inside the tree
    return freed


def _size(path: Path) -> int:
    import contextlib

    if path.is_symlink() or not path.is_dir():
        return path.lstat().st_size
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_size
    return total


UV_QUERY_TIMEOUT = 60.0


def uv_cache_dir(uv: str) -> Optional[Path]:
    """uv's cache folder, as uv itself reports it (its settings and UV_CACHE_DIR apply)."""
    folder = _ask_uv([uv, "cache", "dir"])
    from pathlib import Path

    return Path(folder) if folder else None


def uv_cache(uv: str) -> tuple[Optional[Path], Optional[int]]:
    """uv's cache folder and its size in bytes (None where this uv cannot say: an old uv has no
    `uv cache size`)."""
    folder = uv_cache_dir(uv)
    if folder is None:  # uv could not be asked, or could not say: its size is not asked either
        return None, None
    size = _ask_uv([uv, "cache", "size", "--preview-features", "cache-size"])
    return folder, int(size) if size and size.isdigit() else None


def _ask_uv(cmd: list[str]) -> Optional[str]:
    """uv's last line of answer, asked where gpuenv runs uv (uv.question): the cache its locks
    and installs use, never one a `uv.toml` in the user's working folder names."""
    from gpuenv.fs.workdir import WorkdirError
    from gpuenv.uv.question import ask_uv

    try:
        done = ask_uv(cmd, UV_QUERY_TIMEOUT)
    except WorkdirError as exc:  # no safe place to ask from: uv's cache goes unreported, never
        from gpuenv import output  # asked from the user's folder (a report must not fail what it

        if not output.quiet():  # reports on), and the user is told why
            print(f"gpuenv: uv was not asked about its cache: {exc}", file=sys.stderr)
        return None
    if done is None:
        return None
    lines = done.stdout.strip().splitlines()
    return lines[-1].strip() if done.returncode == 0 and lines else None
