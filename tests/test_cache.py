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


# `cache clean` empties only what gpuenv wrote, in a folder that is gpuenv's. Hostile round three:
# any CACHEDIR.TAG was enough, so GPUENV_CACHE_DIR pointed at uv's cache (which gpuenv promises
# never to empty) or at a folder another tool tagged emptied it.
FOREIGN_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# another tool's cache\n"


def _listing(root: Path) -> list[tuple[str, bytes]]:
    return sorted(
        (str(p.relative_to(root)), p.read_bytes() if p.is_file() else b"") for p in root.rglob("*")
    )


@pytest.mark.parametrize("tag", [FOREIGN_TAG, None, cache.TAG_TEXT + "extra\n", "link"], ids=str)
def test_clean_leaves_a_folder_that_is_not_gpuenvs_whole(
    tag: object, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    root = tmp_path / "somebodys-cache"
    (root / "recipes").mkdir(parents=True)  # even with folders named like gpuenv's kinds
    (root / "recipes" / "x.pickle").write_bytes(b"theirs")
    (root / "wheels-v5").mkdir()
    (root / "wheels-v5" / "big.whl").write_bytes(b"w" * 100)
    if tag == "link":  # gpuenv's own text, reached through a link: not gpuenv's tag
        (tmp_path / "real-tag").write_text(cache.TAG_TEXT)
        (root / cache.TAG_NAME).symlink_to(tmp_path / "real-tag")
    elif isinstance(tag, str):
        (root / cache.TAG_NAME).write_text(tag)
    before = _listing(root)
    monkeypatch.setenv(cache.CACHE_ENV, str(root))
    with pytest.raises(cache.CacheError, match="nothing was removed"):
        cache.clean_cache()
    assert _listing(root) == before


def test_clean_refuses_uvs_own_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import subprocess

    from gpuenv.uv.binary import find_uv

    uv_cache = tmp_path / "uv-cache"
    done = subprocess.run(
        [find_uv(), "cache", "dir", "--cache-dir", str(uv_cache)], capture_output=True, check=False
    )
    assert done.returncode == 0
    subprocess.run(  # uv makes and tags its cache on its first real use
        [find_uv(), "venv", "--cache-dir", str(uv_cache), str(tmp_path / "v")],
        capture_output=True,
        check=True,
        env={**__import__("os").environ, "UV_PYTHON_DOWNLOADS": "never"},
    )
    assert (uv_cache / cache.TAG_NAME).is_file()
    before = _listing(uv_cache)
    monkeypatch.setenv(cache.CACHE_ENV, str(uv_cache))
    with pytest.raises(cache.CacheError, match="not gpuenv's"):
        cache.clean_cache()
    assert _listing(uv_cache) == before


def test_clean_removes_only_gpuenvs_kinds_from_its_own_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    root = tmp_path / "cache"
    monkeypatch.setenv(cache.CACHE_ENV, str(root))
    cache.write_pickle("recipes", "k", 1)  # tags the folder as gpuenv's
    for kind in ("artifacts", "index-probe", "rattler"):
        (root / kind).mkdir()
        (root / kind / "f").write_bytes(b"x" * 10)
    (root / "uv").mkdir()  # e.g. UV_CACHE_DIR set inside it by the user
    (root / "uv" / "wheel.whl").write_bytes(b"keep")
    (root / "notes.txt").write_text("keep")
    assert cache.clean_cache() >= 30
    assert sorted(p.name for p in root.iterdir()) == [cache.TAG_NAME, "notes.txt", "uv"]
    assert (root / "uv" / "wheel.whl").read_bytes() == b"keep"
