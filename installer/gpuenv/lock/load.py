"""The one place that picks a lockfile's reader: by its name, as PEP 751 defines pylock names.

`pylock.toml` / `pylock.NAME.toml` -> the PEP 751 reader; anything else -> the conda-lock reader.
install, fetch and `lock --check` call load_locked, never a reader directly.
"""

from __future__ import annotations

from pathlib import Path

from gpuenv.lock.lockfile import LockedEnvironment, LockfileError, read_lockfile
from gpuenv.lock.names import is_pylock_name


def load_locked(path: Path) -> LockedEnvironment:
    path = Path(path)
    if is_pylock_name(path):
        from gpuenv.lock.pylock_reader import read_pylock

        return read_pylock(path)
    if path.name.endswith(".toml"):
        raise LockfileError(
            f"{path.name}: a TOML lockfile must be named pylock.toml or pylock.NAME.toml (PEP 751);"
            " gpuenv's other lockfiles are conda-lock YAML (*.conda-lock.yml)"
        )
    return read_lockfile(path)
