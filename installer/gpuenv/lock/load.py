"""The one way in to a lockfile: its bytes read bounded, then the reader its name picks, as PEP
751 defines pylock names.

`pylock.toml` / `pylock.NAME.toml` -> the PEP 751 reader; anything else -> the conda-lock reader.
install, fetch, setup and `lock --check` call load_locked, never a reader directly. Install
reads the bytes first (read_lockfile_bytes: its no-op check hashes them, and uv starts on the
Python they name) before it imports either reader.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

from gpuenv.fs.safe_paths import UnsafePathError, read_bounded
from gpuenv.lock.errors import LockfileError
from gpuenv.lock.names import is_pylock_name

if TYPE_CHECKING:
    from gpuenv.lock.model import LockedEnvironment

MAX_LOCKFILE_BYTES = 64 << 20


def read_lockfile_bytes(path: Path) -> bytes:
    """The file's bytes; a pipe, a device, a folder or a file over MAX_LOCKFILE_BYTES is
    refused (LockfileError, exit 2) without blocking on it or reading it whole."""
    try:
        return read_bounded(Path(path), MAX_LOCKFILE_BYTES, "lockfile")
    except UnsafePathError as exc:
        raise LockfileError(str(exc)) from None


def load_locked(path: Path, raw: Optional[bytes] = None) -> LockedEnvironment:
    """The lockfile at `path`, validated as untrusted input; `raw` is its content when the
    caller has read it already (one bounded read: a pipe or /dev/zero is refused before either
    reader runs)."""
    path = Path(path)
    raw = read_lockfile_bytes(path) if raw is None else raw
    if is_pylock_name(path):
        from gpuenv.lock.pylock.read import parse_pylock

        return parse_pylock(raw, path)
    if path.name.endswith(".toml"):
        raise LockfileError(
            f"{path.name}: a TOML lockfile must be named pylock.toml or pylock.NAME.toml (PEP 751);"
            " gpuenv's other lockfiles are conda-lock YAML (*.conda-lock.yml)"
        )
    from gpuenv.lock.conda_lock.read import parse_lockfile

    return parse_lockfile(raw, path)
