"""Keep a test's gpuenv, uv and py-rattler away from the developer's own store, caches and index
configuration."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import pytest

_UV_INDEX_VARS = (
    "UV_INDEX_URL",
    "UV_DEFAULT_INDEX",
    "UV_INDEX",
    "UV_EXTRA_INDEX_URL",
    "UV_FIND_LINKS",
)


def isolate(
    monkeypatch: pytest.MonkeyPatch,
    *,
    gpuenv_root: Path,
    uv_cache: Path,
    home: Optional[Path] = None,
) -> None:
    """A private gpuenv cache (and store when `home` is given), a shared uv cache, no uv
    configuration, no uv-managed Python downloads."""
    if home is not None:
        monkeypatch.setenv("GPUENV_HOME", str(home))
    monkeypatch.setenv("GPUENV_CACHE_DIR", str(gpuenv_root))
    monkeypatch.setenv("UV_CACHE_DIR", str(uv_cache))
    monkeypatch.setenv("UV_NO_CONFIG", "1")
    monkeypatch.setenv("UV_PYTHON_DOWNLOADS", "never")
    for var in _UV_INDEX_VARS:
        monkeypatch.delenv(var, raising=False)
