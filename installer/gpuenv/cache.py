"""gpuenv's cache folder: derived data only, safe to delete at any time.

A wheel of gpuenv also ships a read-only cache (`gpuenv/_cache/`, written at build time by
hatch_build.py: the parsed knowledge base), so the first run after an install does not parse
the knowledge base's TOML. Entries are keyed by a hash of their inputs, so a packaged entry is
used only when it matches exactly.
"""

from __future__ import annotations

import os
import pickle
import sys
from pathlib import Path
from typing import Any, Optional

CACHE_ENV = "GPUENV_CACHE_DIR"
PACKAGED = Path(__file__).resolve().parent / "_cache"


def cache_dir(platform: str = sys.platform) -> Path:
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override)
    if platform.startswith("linux"):
        # platformdirs' own rule on Linux, without its import (a few ms on every command)
        xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
        return Path(xdg or os.path.expanduser("~/.cache")) / "gpuenv"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("gpuenv", appauthor=False))


def read_pickle(kind: str, key: str) -> Optional[Any]:
    """The cached value: the packaged copy if the wheel has it, else the user's cache's."""
    for folder in (PACKAGED / kind, cache_dir() / kind):
        path = folder / f"{key}.pickle"
        try:
            with path.open("rb") as fh:
                return pickle.load(fh)
        except OSError:
            continue  # absent
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError):
            continue  # written by another gpuenv version: the next place, or rebuild it
    return None


def write_pickle(kind: str, key: str, value: Any) -> None:
    import tempfile

    folder = cache_dir() / kind
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, folder / f"{key}.pickle")
    except OSError:
        pass  # a read-only home must not stop resolve; it is only slower
