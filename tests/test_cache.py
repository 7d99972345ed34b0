"""gpuenv's cache folder and its packaged, read-only part."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from platformdirs import user_cache_dir

from gpuenv import cache


def test_linux_cache_dir_is_platformdirs_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(cache.CACHE_ENV, raising=False)
    for xdg in (str(tmp_path / "xdg"), "", "  "):
        monkeypatch.setenv("XDG_CACHE_HOME", xdg)
        assert cache.cache_dir("linux") == Path(user_cache_dir("gpuenv", appauthor=False))
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache.cache_dir("linux") == Path(user_cache_dir("gpuenv", appauthor=False))


def test_override_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path))
    assert cache.cache_dir("linux") == tmp_path


def test_packaged_entry_first_then_the_users(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "user"))
    monkeypatch.setattr(cache, "PACKAGED", tmp_path / "packaged")
    cache.write_pickle("kind", "k", "from the user's cache")
    assert cache.read_pickle("kind", "k") == "from the user's cache"
    (tmp_path / "packaged" / "kind").mkdir(parents=True)
    (tmp_path / "packaged" / "kind" / "k.pickle").write_bytes(pickle.dumps("shipped"))
    assert cache.read_pickle("kind", "k") == "shipped"


def test_a_damaged_packaged_entry_falls_back(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "user"))
    monkeypatch.setattr(cache, "PACKAGED", tmp_path / "packaged")
    (tmp_path / "packaged" / "kind").mkdir(parents=True)
    (tmp_path / "packaged" / "kind" / "k.pickle").write_bytes(b"not a pickle")
    assert cache.read_pickle("kind", "k") is None
    cache.write_pickle("kind", "k", 42)
    assert cache.read_pickle("kind", "k") == 42
