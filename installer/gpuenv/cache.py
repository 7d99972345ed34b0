"""gpuenv's cache folder: derived data only, safe to delete at any time."""

from __future__ import annotations

import os
import pickle
import tempfile
from pathlib import Path
from typing import Any, Optional

CACHE_ENV = "GPUENV_CACHE_DIR"


def cache_dir() -> Path:
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("gpuenv", appauthor=False))


def read_pickle(kind: str, key: str) -> Optional[Any]:
    path = cache_dir() / kind / f"{key}.pickle"
    try:
        with path.open("rb") as fh:
            return pickle.load(fh)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError):
        return None  # absent, or written by another gpuenv version: rebuild it


def write_pickle(kind: str, key: str, value: Any) -> None:
    folder = cache_dir() / kind
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, folder / f"{key}.pickle")
    except OSError:
        pass  # a read-only home must not stop resolve; it is only slower
