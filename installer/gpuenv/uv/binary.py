"""Where the uv binary is: the one the `uv` package (a dependency of gpuenv) ships.

Outside gpuenv.lock: install and setup start uv (its search for the lockfile's Python) before
they import the lockfile stack."""

from __future__ import annotations

import functools

from gpuenv.errors import FAILURE_EXIT, GpuenvError


class UvMissingError(GpuenvError, RuntimeError):
    """gpuenv's environment lacks uv (a dependency): exit 1."""

    exit_code = FAILURE_EXIT


@functools.lru_cache(maxsize=1)
def find_uv() -> str:
    """The uv binary beside this interpreter (looked for once: each look 1-2 ms)."""
    try:
        from uv import find_uv_bin
    except ImportError as exc:  # pragma: no cover - uv is a dependency
        raise UvMissingError(
            "uv is not installed beside gpuenv: run scripts/bootstrap.sh again, or"
            " `python -m pip install uv` with the Python gpuenv runs on"
        ) from exc
    return str(find_uv_bin())
