"""Work folders and the XDG base folders, made with os alone (no tempfile, pathlib or
platformdirs on `gpuenv lock`'s way to starting uv): the same folders as before."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from gpuenv import cache
from gpuenv.fs import workdir
from gpuenv.fs.workdir import WorkdirError, make_workdir, remove_workdir, stale_workdirs
from gpuenv.fs.xdg import xdg_folder

VALUES = ["", "   ", "/srv/xdg", "relative/xdg", "~/tilde", " /srv/padded", "/srv/trailing "]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux rule")
@pytest.mark.parametrize("value", [*VALUES, None], ids=repr)
@pytest.mark.parametrize(
    ("variable", "default", "theirs"),
    [
        ("XDG_CACHE_HOME", "~/.cache", "user_cache_dir"),
        ("XDG_DATA_HOME", "~/.local/share", "user_data_dir"),
    ],
)
def test_the_folder_is_the_one_platformdirs_names(
    monkeypatch: pytest.MonkeyPatch, value: str | None, variable: str, default: str, theirs: str
) -> None:
    import platformdirs

    if value is None:
        monkeypatch.delenv(variable, raising=False)
    else:
        monkeypatch.setenv(variable, value)
    expected = getattr(platformdirs, theirs)("gpuenv", appauthor=False)
    assert xdg_folder(variable, default) == expected


def test_cache_and_home_follow_the_rule(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(cache.CACHE_ENV, raising=False)
    monkeypatch.delenv(workdir.HOME_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")  # ignored, as the spec says
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert cache.cache_root("linux") == os.path.expanduser("~/.cache/gpuenv")
    assert workdir.gpuenv_home_text("linux") == str(tmp_path / "data" / "gpuenv")
    assert workdir.gpuenv_home() == tmp_path / "data" / "gpuenv"


def test_a_work_folder_is_private_and_named_for_its_process() -> None:
    path = make_workdir("lock")
    try:
        kind, pid, token = os.path.basename(path).split("-")
        assert (kind, pid) == ("lock", str(os.getpid())) and token
        assert os.path.dirname(path) == workdir.checked_work_root_text()
        info = os.lstat(path)
        assert stat.S_ISDIR(info.st_mode) and stat.S_IMODE(info.st_mode) & 0o077 == 0
        assert make_workdir("lock") != path  # a fresh one each time
    finally:
        remove_workdir(path)
    assert not os.path.exists(path)


def test_a_taken_name_is_never_used(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A name already there (a planted link to elsewhere) is skipped, not written through."""
    root = workdir.checked_work_root_text()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    tokens = iter([b"\x00" * 5, b"\x01" * 5])
    monkeypatch.setattr(workdir.os, "urandom", lambda n: next(tokens))
    planted = Path(root, f"lock-{os.getpid()}-{'00' * 5}")
    planted.symlink_to(elsewhere)
    try:
        path = make_workdir("lock")
        assert path == os.path.join(root, f"lock-{os.getpid()}-{'01' * 5}")
        assert not os.path.islink(path) and os.path.isdir(path)
        remove_workdir(path)
    finally:
        planted.unlink()
    assert list(elsewhere.iterdir()) == []


def test_every_name_taken_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    root = workdir.checked_work_root_text()
    monkeypatch.setattr(workdir.os, "urandom", lambda n: b"\x02" * n)
    taken = Path(root, f"lock-{os.getpid()}-{'02' * 5}")
    taken.mkdir()
    try:
        with pytest.raises(WorkdirError, match="every name tried was taken"):
            make_workdir("lock")
    finally:
        taken.rmdir()


def test_a_killed_runs_folder_is_found_by_its_name(tmp_path: Path) -> None:
    root = tmp_path / "work"
    root.mkdir()
    (root / "lock-999999999-ab12").mkdir()
    (root / f"lock-{os.getpid()}-cd34").mkdir()
    assert stale_workdirs(root) == [root / "lock-999999999-ab12"]


def test_the_linux_folders_need_no_platformdirs(monkeypatch: pytest.MonkeyPatch) -> None:
    """platformdirs costs every command a few ms to import: on Linux its rule is gpuenv's own."""
    monkeypatch.setitem(sys.modules, "platformdirs", None)  # importing it would fail
    monkeypatch.delenv(cache.CACHE_ENV, raising=False)
    monkeypatch.delenv(workdir.HOME_ENV, raising=False)
    assert cache.cache_root("linux").endswith("gpuenv")
    assert workdir.gpuenv_home_text("linux").endswith("gpuenv")
    with pytest.raises(ImportError):
        workdir.gpuenv_home_text("darwin")  # elsewhere, platformdirs decides


def test_a_uv_that_cannot_start_leaves_no_work_folder(tmp_path: Path) -> None:
    from gpuenv.lock import uv_start

    root = workdir.checked_work_root_text()
    before = set(os.listdir(root))
    with pytest.raises(OSError):
        uv_start.start(str(tmp_path / "no-uv"), "[project]\n", "", (), (), ())
    assert set(os.listdir(root)) == before
