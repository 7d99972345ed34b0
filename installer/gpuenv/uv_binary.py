"""Where the uv binary is: the one the `uv` package (a dependency of gpuenv) ships.

install and setup ask here, not gpuenv.lock.pypi (which answers the same for the lock stage), so
that they can start uv (its search for the lockfile's Python) before they import the lockfile
stack."""

from __future__ import annotations


def find_uv() -> str:
    try:
        from uv import find_uv_bin
    except ImportError as exc:  # pragma: no cover - uv is a dependency
        from gpuenv.lock.errors import LockError

        raise LockError("uv is not installed; reinstall gpuenv (`pip install gpuenv`)") from exc
    return str(find_uv_bin())
