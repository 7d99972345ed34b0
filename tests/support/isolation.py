"""Keep a test's gpuenv, uv and py-rattler away from the developer's own store, caches and index
configuration."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional

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


def isolate_store(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The usual isolation of a test that installs: its own store and gpuenv cache in tmp_path,
    one uv cache for the whole session (so wheels are fetched once)."""
    isolate(
        monkeypatch,
        gpuenv_root=tmp_path / "cache",
        uv_cache=tmp_path_factory.getbasetemp() / "uv-cache",
        home=tmp_path / "home",
    )


def only_index(monkeypatch: pytest.MonkeyPatch, index: str) -> None:
    """pip's configuration names this index alone: no find-links, no mirrors of this machine."""
    monkeypatch.setenv("PIP_INDEX_URL", index)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)


def record_uv_calls(monkeypatch: pytest.MonkeyPatch, folder: Path) -> Path:
    """gpuenv's uv becomes a wrapper that appends each command line to the file returned, then
    runs the real uv (POSIX shells only)."""
    import gpuenv.uv.binary as uv_binary

    real_uv = uv_binary.find_uv()
    calls = folder / "uv-calls"
    wrapper = folder / "uv"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> "{calls}"\nexec "{real_uv}" "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setattr(uv_binary, "find_uv", lambda: str(wrapper))
    return calls


def trust_repos(monkeypatch: pytest.MonkeyPatch, repos: Any) -> None:
    """The installing user's settings name the local repositories the tests lock from (pip's
    index, its wheels folder as find-links, gpuenv's trusted conda channels), as the lockfile-origin rule asks of anyone who
    installs a lockfile locked from them (gpuenv.envs.origins); a test sets its own to see
    what another user's settings do."""
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_INDEX_URL", repos.index)
    monkeypatch.delenv("PIP_EXTRA_INDEX_URL", raising=False)
    monkeypatch.setenv("PIP_FIND_LINKS", str(repos.wheels))
    monkeypatch.setenv("GPUENV_CHANNELS", repos.channel)


def real_indexes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Undo trust_repos: the user's own settings (uv's default index) for a network test."""
    for var in ("PIP_CONFIG_FILE", "PIP_INDEX_URL", "PIP_FIND_LINKS", "GPUENV_CHANNELS"):
        monkeypatch.delenv(var, raising=False)
