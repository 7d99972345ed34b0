"""The one place that picks a lockfile's reader: by its name, as PEP 751 defines pylock names.

`pylock.toml` / `pylock.NAME.toml` -> the PEP 751 reader; anything else -> the conda-lock reader.
install, fetch and `lock --check` call load_locked, never a reader directly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from gpuenv.lock.conda_lock.read import parse_lockfile, read_lockfile_bytes
from gpuenv.lock.errors import LockfileError
from gpuenv.lock.model import LockedEnvironment
from gpuenv.lock.names import is_pylock_name


def load_locked(path: Path, raw: Optional[bytes] = None) -> LockedEnvironment:
    """The lockfile at `path`; `raw` is its content when the caller has read it already (one
    bounded read: a pipe or /dev/zero is refused before either reader runs)."""
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
    return parse_lockfile(raw, path)
