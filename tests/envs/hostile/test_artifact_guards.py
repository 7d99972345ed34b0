"""Checks on the files install reads and hands on that no other test would miss if they were
deleted (issue 20's survivors): a wheelhouse file of the right name is hashed before it is
kept, a link or FIFO planted in the artifact cache is refused before anything is downloaded,
and uv is told to check every hash.

A link there is refused twice (`inside` finds a link on the way; the cache's own check before
the download): with the first in place the second cannot be told apart for a link, so the
FIFO case is what guards it. The same holds for a wheelhouse entry: a link is refused by
`inside` first, a FIFO or a folder only by the wheelhouse's own check (uv would block on the
FIFO), which is what the last test guards.

uv's own command line is captured (not run) for the last one: whether uv honours
--require-hashes is uv's to test; that gpuenv asks for it is ours.
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from pathlib import Path

import pytest

from gpuenv.envs import backends
from gpuenv.envs.artifacts import Artifact, InstallSource, fetch_all, gather
from gpuenv.fs.safe_paths import UnsafePathError

GOOD = b"the real package bytes\n"
SHA = hashlib.sha256(GOOD).hexdigest()
MD5 = hashlib.md5(GOOD).hexdigest()


def _source(tmp_path: Path, name: str) -> Path:
    src = tmp_path / "origin" / name
    src.parent.mkdir(parents=True, exist_ok=True)
    src.write_bytes(GOOD)
    return src


def _wrong_bytes(below: bool) -> bytes:
    """Bytes whose sha256 sorts below (or above) the right one's: a digest is compared for
    equality, whichever side of it the wrong one falls."""
    for i in range(1000):
        data = f"a stale or altered copy {i}\n".encode()
        if (hashlib.sha256(data).hexdigest() < SHA) is below:
            return data
    raise AssertionError("no such bytes in 1000 tries")


@pytest.mark.parametrize("below", [True, False], ids=["digest-below", "digest-above"])
def test_fetch_replaces_a_file_of_the_right_name_with_the_wrong_bytes(
    tmp_path: Path, below: bool
) -> None:
    name = "demo-1.0-py3-none-any.whl"
    art = Artifact("pip", "demo", name, _source(tmp_path, name).as_uri(), SHA, None)
    dest = tmp_path / "house"
    dest.mkdir()
    (dest / name).write_bytes(_wrong_bytes(below))  # a stale or altered copy
    [got] = fetch_all([art], dest)
    assert got.path.read_bytes() == GOOD


@pytest.mark.parametrize("kind", ["link", "fifo"])
def test_something_planted_in_the_artifact_cache_is_refused_before_downloading(
    tmp_path: Path, kind: str
) -> None:
    name = "cudatoolkit-11.2.2-h_0.tar.bz2"
    art = Artifact("conda", "cudatoolkit", name, _source(tmp_path, name).as_uri(), SHA, MD5)
    cache = tmp_path / "cache"
    planted = cache / "artifacts" / SHA / name
    planted.parent.mkdir(parents=True)
    if kind == "link":  # even to the right bytes inside the cache: not gpuenv's checked copy
        (cache / "planted.tar.bz2").write_bytes(GOOD)
        planted.symlink_to(cache / "planted.tar.bz2")
    else:
        os.mkfifo(planted)
    downloaded: list[str] = []
    with pytest.raises(UnsafePathError):
        gather([art], cache=cache, progress=lambda f, done, total: downloaded.append(f))
    assert downloaded == []  # refused before the download, not after it
    assert planted.is_symlink() if kind == "link" else stat.S_ISFIFO(os.lstat(planted).st_mode)


def test_uv_installs_only_what_matches_the_lockfiles_hashes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[list[str]] = []
    lines: list[str] = []

    def fake_run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
        seen.append(cmd)
        lines.extend(Path(cmd[cmd.index("-r") + 1]).read_text().splitlines())
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(backends, "_run", fake_run)
    url = "https://files.example/demo-1.0-py3-none-any.whl"
    art = Artifact("pip", "demo", "demo-1.0-py3-none-any.whl", url, SHA, None)
    backends.install_wheels(tmp_path / "python", [InstallSource(art, url)], "uv")
    [cmd] = seen
    assert {"--require-hashes", "--no-build", "--no-deps", "--no-index"} <= set(cmd)
    assert lines == [f"demo @ {url} --hash=sha256:{SHA}"]


@pytest.mark.parametrize("kind", ["link-inside", "fifo", "folder"])
def test_a_wheelhouse_entry_is_read_only_as_a_regular_file(tmp_path: Path, kind: str) -> None:
    # refused when the install sources are gathered, before uv (which blocks on a FIFO) runs
    name = "demo-1.0-py3-none-any.whl"
    house = tmp_path / "house"
    house.mkdir()
    entry = house / name
    if kind == "link-inside":  # to the right bytes, in the wheelhouse itself
        (house / "real.whl").write_bytes(GOOD)
        entry.symlink_to(house / "real.whl")
    elif kind == "fifo":
        os.mkfifo(entry)
    else:
        entry.mkdir()
    art = Artifact("pip", "demo", name, f"https://files.example/{name}", SHA, None)
    with pytest.raises(UnsafePathError):
        gather([art], cache=tmp_path / "cache", wheelhouse=house)
