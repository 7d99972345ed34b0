"""gpuenv's cache folder and its packaged, read-only part."""

from __future__ import annotations

import os
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


# The knowledge-base cache is a pickle, and loading a pickle runs code: it is read only from a
# private regular file in a private folder. Hostile round three: anyone who could write a shared
# GPUENV_CACHE_DIR ran code as the user, and a FIFO there hung every command.
class _Canary:
    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (exec, (f"open({str(self.path)!r}, 'w').close()",))


def _plant(root: Path, canary: Path, mode: int = 0o600, folder_mode: int = 0o700) -> Path:
    folder = root / "recipes"
    folder.mkdir(parents=True, exist_ok=True)
    entry = folder / "k.pickle"
    entry.write_bytes(pickle.dumps(_Canary(canary)))
    entry.chmod(mode)
    folder.chmod(folder_mode)
    return entry


def test_a_private_pickle_is_loaded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # the control for the cases below: the same pickle, private, does run when loaded
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "c"))
    _plant(tmp_path / "c", tmp_path / "canary")
    cache.read_pickle("recipes", "k")
    assert (tmp_path / "canary").exists()


@pytest.mark.parametrize(
    ("mode", "folder_mode"), [(0o660, 0o700), (0o602, 0o700), (0o600, 0o770), (0o600, 0o703)]
)
def test_a_pickle_others_can_write_is_never_loaded(
    mode: int, folder_mode: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "c"))
    _plant(tmp_path / "c", tmp_path / "canary", mode, folder_mode)
    assert cache.read_pickle("recipes", "k") is None
    assert not (tmp_path / "canary").exists()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs chown")
def test_a_pickle_another_user_owns_is_never_loaded(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "c"))
    entry = _plant(tmp_path / "c", tmp_path / "canary")
    os.chown(entry, 65534, 65534)
    assert cache.read_pickle("recipes", "k") is None
    os.chown(entry, 0, 0)
    os.chown(entry.parent, 65534, 65534)
    assert cache.read_pickle("recipes", "k") is None
    assert not (tmp_path / "canary").exists()


@pytest.mark.parametrize("linked", ["file", "folder"])
def test_a_linked_pickle_is_never_loaded(
    linked: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    entry = _plant(tmp_path / "elsewhere", tmp_path / "canary")  # private, but not in the cache
    root = tmp_path / "c"
    if linked == "file":
        (root / "recipes").mkdir(parents=True, mode=0o700)
        (root / "recipes" / "k.pickle").symlink_to(entry)
    else:
        root.mkdir()
        (root / "recipes").symlink_to(entry.parent)
    monkeypatch.setenv(cache.CACHE_ENV, str(root))
    assert cache.read_pickle("recipes", "k") is None
    assert not (tmp_path / "canary").exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_a_fifo_or_a_huge_file_at_the_cache_path_is_skipped(tmp_path: Path) -> None:
    import subprocess
    import sys

    from gpuenv.recipes import kb_cache

    folder = tmp_path / "c" / "recipes"
    folder.mkdir(parents=True, mode=0o700)
    os.mkfifo(folder / f"{kb_cache._STAMPS}.pickle", 0o600)  # what every command reads first
    with (folder / "big.pickle").open("wb") as fh:
        fh.truncate(cache.MAX_PICKLE_BYTES + 1)
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from gpuenv import cache; from gpuenv.recipes import load_knowledge_base;"
            "print(cache.read_pickle('recipes', 'big')); load_knowledge_base(); print('loaded')",
        ],
        env={**os.environ, cache.CACHE_ENV: str(tmp_path / "c")},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["None", "loaded"]


def test_a_group_writable_umask_still_gives_a_usable_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "c"))
    # a folder an earlier gpuenv made under umask 002 (Debian's and Ubuntu's default for users
    # with their own group): the next write makes it private, so the cache works again
    (tmp_path / "c" / "recipes").mkdir(parents=True)
    (tmp_path / "c" / "recipes").chmod(0o775)
    old = os.umask(0o002)
    try:
        cache.write_pickle("recipes", "k", {"kb": 1})
        cache.write_pickle("fresh", "k", {"kb": 2})
    finally:
        os.umask(old)
    assert cache.read_pickle("recipes", "k") == {"kb": 1}
    assert cache.read_pickle("fresh", "k") == {"kb": 2}


# fs.private_read at its edges (mutation testing, area fs).
def test_a_private_file_of_exactly_the_limit_is_read_whole(tmp_path: Path) -> None:
    from gpuenv.fs.private_read import read_private

    folder = tmp_path / "c"
    folder.mkdir(mode=0o700)
    for size in (100, 1000):
        (folder / "k.pickle").write_bytes(b"x" * size)
        (folder / "k.pickle").chmod(0o600)
        assert read_private(folder, "k.pickle", size) == (b"x" * size, "ok")
        data, why = read_private(folder, "k.pickle", size - 1)
        assert data is None and why.endswith(f"is larger than {size - 1} bytes")


def test_a_file_that_fails_to_read_is_a_reason_not_a_crash() -> None:
    from gpuenv.fs.private_read import read_private

    # /proc/<pid>/mem: a private regular file (size 0, mode 0600) whose first read fails (EIO)
    folder = Path(f"/proc/{os.getpid()}")
    if not (folder / "mem").exists():
        pytest.skip("no /proc")
    data, why = read_private(folder, "mem", 100)
    assert data is None and why == f"{folder / 'mem'}: Input/output error"


def test_a_folder_swapped_for_a_link_after_its_check_is_not_read_through(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The folder is opened once and the file read through that handle: replacing the folder
    by a link to another after it was checked changes nothing that is read."""
    from gpuenv.fs import private_read

    folder, planted = tmp_path / "c", tmp_path / "planted"
    for where, text in ((folder, b"checked"), (planted, b"planted")):
        where.mkdir(mode=0o700)
        (where / "k.pickle").write_bytes(text)
        (where / "k.pickle").chmod(0o600)
    check = private_read.why_not_private
    swapped: list[bool] = []

    def check_then_swap(info: os.stat_result, windows: bool = False) -> str | None:
        if not swapped:  # the folder's check: swap it right after
            folder.rename(tmp_path / "moved")
            folder.symlink_to(planted, target_is_directory=True)
            swapped.append(True)
        return check(info, windows)

    monkeypatch.setattr(private_read, "why_not_private", check_then_swap)
    assert private_read.read_private(folder, "k.pickle", 100) == (b"checked", "ok")
    assert swapped


def _private_entry(tmp_path: Path, name: str, content: bytes) -> tuple[Path, Path]:
    """A private cache folder holding one private file: the folder and the file."""
    folder = tmp_path / "c"
    folder.mkdir(mode=0o700)
    entry = folder / name
    entry.write_bytes(content)
    entry.chmod(0o600)
    return folder, entry


def test_a_file_that_grows_past_the_limit_while_it_is_read_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The size is checked on what was read, not only on fstat's answer before it."""
    from gpuenv.fs import private_read

    folder, entry = _private_entry(tmp_path, "k.pickle", b"x" * 1000)
    check = private_read.why_not_private
    calls: list[int] = []

    def check_then_grow(info: os.stat_result, windows: bool = False) -> str | None:
        calls.append(1)
        if len(calls) == 2:  # the file's check, after its fstat: it grows now
            with entry.open("ab") as fh:
                fh.write(b"y" * 500)
        return check(info, windows)

    monkeypatch.setattr(private_read, "why_not_private", check_then_grow)
    data, why = private_read.read_private(folder, "k.pickle", 1200)
    assert data is None and why == f"{entry} is larger than 1200 bytes"
    assert len(calls) == 2


def test_a_file_that_grows_while_it_is_read_is_read_no_further_than_the_limit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """One read takes the size fstat gave; the reads after it stop one byte past the limit,
    however much the file has grown (a planted entry cannot make gpuenv read gigabytes)."""
    from gpuenv.fs import private_read

    folder, entry = _private_entry(tmp_path, "k.pickle", b"x" * 1000)
    real_read = os.read
    got: list[int] = []

    def read_then_grow(fd: int, n: int) -> bytes:
        chunk = real_read(fd, n)
        if not got:  # after the first read: it grows by 3 MiB
            with entry.open("ab") as fh:
                fh.write(b"y" * (3 << 20))
        got.append(len(chunk))
        return chunk

    monkeypatch.setattr(os, "read", read_then_grow)
    data, why = private_read.read_private(folder, "k.pickle", 1200)
    assert data is None and why == f"{entry} is larger than 1200 bytes"
    assert got[0] == 1000 and sum(got) == 1201


def test_an_entry_larger_than_a_read_block_is_read_at_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The knowledge base's pickle (1.5 MB) comes in one read, not in blocks copied together."""
    from gpuenv.fs import private_read

    folder, _ = _private_entry(tmp_path, "kb.pickle", b"x" * (3 << 20))
    real_read = os.read
    got: list[int] = []

    def counted(fd: int, n: int) -> bytes:
        chunk = real_read(fd, n)
        got.append(len(chunk))
        return chunk

    monkeypatch.setattr(os, "read", counted)
    data, _ = private_read.read_private(folder, "kb.pickle", 8 << 20)
    assert data is not None and len(data) == 3 << 20
    assert got == [3 << 20, 0]  # the file, then its end


def test_a_linked_file_is_refused_with_the_reason_in_words(tmp_path: Path) -> None:
    from gpuenv.fs.private_read import read_private

    folder = tmp_path / "c"
    folder.mkdir(mode=0o700)
    (tmp_path / "real.pickle").write_bytes(b"x")
    (folder / "k.pickle").symlink_to(tmp_path / "real.pickle")
    data, why = read_private(folder, "k.pickle", 100)
    assert data is None and why.startswith(f"{folder / 'k.pickle'}")
    assert "[Errno" not in why


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX owners")
def test_only_the_running_users_own_files_count_as_private(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The owner must be the user running gpuenv: not root (a lower uid) for a user, and a
    user's own uid, however large, is theirs."""
    from gpuenv.fs.private_read import why_not_private

    def status(uid: int, mode: int = 0o100600) -> os.stat_result:
        return os.stat_result((mode, 1, 1, 1, uid, uid, 10, 0, 0, 0))

    monkeypatch.setattr(os, "geteuid", lambda: int("1000"))
    assert why_not_private(status(0), windows=False) == "it belongs to uid 0, not to this user"
    assert why_not_private(status(1001), windows=False) == (
        "it belongs to uid 1001, not to this user"
    )
    assert why_not_private(status(int("1000")), windows=False) is None
    assert why_not_private(status(1000, 0o100620), windows=False) == (
        "others can write it (mode -rw--w----)"
    )


def test_a_planted_link_is_refused_by_the_open_through_the_folder(tmp_path: Path) -> None:
    """The refusal comes from opening the name through the checked folder's handle with
    O_NOFOLLOW (one step, nothing to race), not from a check by name before it: the reason is
    the system's own for a link there."""
    import errno

    from gpuenv.fs.private_read import read_private

    folder = tmp_path / "c"
    folder.mkdir(mode=0o700)
    (tmp_path / "planted").write_bytes(b"x")
    (folder / "k.pickle").symlink_to(tmp_path / "planted")
    data, why = read_private(folder, "k.pickle", 100)
    assert data is None and why == f"{folder / 'k.pickle'}: {os.strerror(errno.ELOOP)}"


# Survivors of the cache area's mutation run (benchmarks/mutation/cache.md), each a behaviour.


def test_write_pickle_keeps_its_folder_and_file_private(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "c"))
    folder = tmp_path / "c" / "kind"
    folder.mkdir(parents=True)
    folder.chmod(0o775)  # made under a umask of 002, before the rule
    cache.write_pickle("kind", "k", 1)
    assert folder.stat().st_mode & 0o777 == 0o755
    assert (folder / "k.pickle").stat().st_mode & 0o777 == 0o600
    assert cache.read_pickle("kind", "k") == 1


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a folder to another user")
def test_another_users_pickle_folder_keeps_its_mode(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "c"))
    folder = tmp_path / "c" / "kind"
    folder.mkdir(parents=True)
    folder.chmod(0o775)
    os.chown(folder, 12345, 12345)
    cache.write_pickle("kind", "k", 1)
    assert folder.stat().st_mode & 0o777 == 0o775  # not gpuenv's to change
    assert cache.read_pickle("kind", "k") is None  # nor to trust


def test_a_refused_entry_is_said_under_verbose_and_an_absent_one_is_not(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from gpuenv import output

    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "c"))
    monkeypatch.setattr(cache, "PACKAGED", tmp_path / "packaged")
    monkeypatch.setattr(output, "_level", output.VERBOSE)
    assert cache.read_pickle("kind", "absent") is None
    assert "cache entry not used" not in capsys.readouterr().err
    cache.write_pickle("kind", "k", 1)
    (tmp_path / "c" / "kind" / "k.pickle").chmod(0o666)
    assert cache.read_pickle("kind", "k") is None
    assert "cache entry not used" in capsys.readouterr().err


def test_clean_empties_an_untagged_folder_of_gpuenvs_kinds_alone(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    root = tmp_path / "c"
    (root / "recipes").mkdir(parents=True)
    (root / "recipes" / "x.pickle").write_bytes(b"x")
    monkeypatch.setenv(cache.CACHE_ENV, str(root))
    assert cache.clean_cache() == 1
    assert not (root / "recipes").exists()


def test_usage_counts_every_entry_but_the_tag(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    root = tmp_path / "c"
    monkeypatch.setenv(cache.CACHE_ENV, str(root))
    cache.write_pickle("recipes", "k", 1)
    (root / "Alpha").write_bytes(b"12345")  # sorts before the tag's name
    usage = cache.cache_usage()
    assert cache.TAG_NAME not in usage
    assert usage["Alpha"] == 5 and usage["recipes"] > 0


def _fake_uv(tmp_path: Path, out: str, status: int) -> str:
    uv = tmp_path / "uv"
    uv.write_text(f"#!/bin/sh\necho 'warning: something'\necho '{out}'\nexit {status}\n")
    uv.chmod(0o755)
    return str(uv)


def test_uvs_cache_folder_is_its_last_line_when_it_succeeds(tmp_path: Path) -> None:
    assert cache.uv_cache_dir(_fake_uv(tmp_path, "/data/uv-cache", 0)) == Path("/data/uv-cache")


def test_a_failing_uv_names_no_cache_folder(tmp_path: Path) -> None:
    assert cache.uv_cache_dir(_fake_uv(tmp_path, "/data/uv-cache", 2)) is None
