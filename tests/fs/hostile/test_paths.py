"""Names become paths only inside their folder: the cache, `fetch -d DIR`, `install --from DIR`.
Links and special files planted in those folders are refused, never followed."""

from __future__ import annotations

import errno
import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpuenv.envs import artifacts
from gpuenv.envs.artifacts import Artifact, fetch_all, gather
from gpuenv.envs.errors import InstallError
from gpuenv.envs.store import EnvLocation, interpreter
from gpuenv.errors import FAILURE_EXIT, USAGE_EXIT, exit_code
from gpuenv.fs.safe_paths import UnsafePathError, inside, plain_name
from installrepos import InstallRepos, run_in
from lockdata import in_process, write_for_wheels

JAX = "jax-0.4.30-py3-none-any.whl"
NUMPY = "numpy-1.26.4-py3-none-any.whl"


@pytest.mark.parametrize(
    "name",
    [
        "",
        ".",
        "..",
        "../x",
        "a/b",
        "a\\b",
        "/etc/passwd",
        "C:x",
        "a\x00b",
        "a\nb",
        "x" * 256,
        "NUL.whl",
        "con",
        "COM1.tar.bz2",
        "lpt9",
        7,
        None,
    ],
)
def test_plain_name_refuses(name: Any) -> None:
    with pytest.raises(UnsafePathError, match="the field"):
        plain_name(name, "the field")


@pytest.mark.parametrize(
    "name",
    [
        JAX,
        "cudatoolkit-11.2.2-h_0.tar.bz2",
        "é.whl",
        "x" * 255,
        "..x",
        "a..b",
        "console.whl",
        "nullx",
    ],
)
def test_plain_name_accepts(name: str) -> None:
    assert plain_name(name, "field") == name


def test_inside_refuses_a_link_that_leads_out(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "link.whl").symlink_to(tmp_path / "outside.whl")
    with pytest.raises(UnsafePathError, match="leads outside"):
        inside(folder, "link.whl", "name")
    assert inside(folder, JAX, "name") == folder / JAX


def test_inside_refuses_a_loop_of_links_with_a_message(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    (folder / "sub").mkdir(parents=True)
    (folder / "loop.whl").symlink_to("loop.whl")
    (folder / "sub" / "a").symlink_to("b")
    (folder / "sub" / "b").symlink_to("a")
    with pytest.raises(UnsafePathError, match="loop of symbolic links"):
        inside(folder, "loop.whl", "name")
    with pytest.raises(UnsafePathError, match="loop of symbolic links"):
        inside(folder, "x.whl", "name", "sub", "a")


def _art(wheels: Path, name: str = JAX, **changes: Any) -> Artifact:
    path = wheels / name
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    fields = dict(
        kind="pip", name=name.split("-")[0], filename=name, url=path.as_uri(), sha256=sha, md5=None
    )
    return Artifact(**{**fields, **changes})  # type: ignore[arg-type]


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


@pytest.mark.parametrize(
    "changes",
    [
        {"filename": "../escaped.whl"},
        {"filename": "/tmp/escaped.whl"},
        {"sha256": "../../x"},
        {"sha256": None},
    ],
    ids=["dotdot-name", "absolute-name", "dotdot-sha", "no-sha"],
)
def test_gather_refuses_unsafe_names_even_past_the_reader(
    changes: dict[str, Any], install_repos: InstallRepos, tmp_path: Path
) -> None:
    before = _tree(tmp_path)
    with pytest.raises(UnsafePathError):
        gather([_art(install_repos.wheels, **changes)], cache=tmp_path / "cache" / "deep")
    assert _tree(tmp_path) == before


def test_a_link_planted_in_the_fetch_folder_is_refused(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PIP_FIND_LINKS", str(install_repos.wheels))  # the user's wheelhouse
    bashrc = tmp_path / "bashrc"
    bashrc.write_text("the user's")
    house = tmp_path / "house"
    house.mkdir()
    (house / JAX).symlink_to(bashrc)
    lockfile = write_for_wheels(tmp_path / "a.lock.yml", [install_repos.wheels / JAX])
    code, _, err = in_process("fetch", str(lockfile), "-d", str(house))
    assert code == USAGE_EXIT, err
    assert "symbolic link" in err or "leads outside" in err
    assert bashrc.read_text() == "the user's" and (house / JAX).is_symlink()


@pytest.mark.parametrize("loop", [False, True], ids=["right-content", "loop"])
def test_a_link_planted_in_the_cache_is_refused(
    loop: bool, install_repos: InstallRepos, tmp_path: Path
) -> None:
    art = _art(install_repos.wheels, kind="conda")  # a file:// conda package: gpuenv copies it
    folder = tmp_path / "cache" / "artifacts" / str(art.sha256)
    folder.mkdir(parents=True)
    # even one with the right content; a link to itself is one message, not a traceback
    (folder / JAX).symlink_to(JAX if loop else install_repos.wheels / JAX)
    with pytest.raises(UnsafePathError):
        gather([art], cache=tmp_path / "cache")


def test_a_link_planted_as_a_cache_folder_is_refused(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    art = _art(install_repos.wheels, kind="conda")
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "cache" / "artifacts").mkdir(parents=True)
    (tmp_path / "cache" / "artifacts" / str(art.sha256)).symlink_to(outside)
    with pytest.raises(UnsafePathError, match="through a link"):
        gather([art], cache=tmp_path / "cache")
    assert list(outside.iterdir()) == []


def _wheelhouse_lock(install_repos: InstallRepos, tmp_path: Path) -> Path:
    return write_for_wheels(
        tmp_path / "a.lock.yml", [install_repos.wheels / JAX, install_repos.wheels / NUMPY]
    )


@pytest.mark.parametrize("kind", ["symlink", "loop", "fifo", "folder"])
def test_a_wheelhouse_entry_that_is_not_a_regular_file_is_refused(
    kind: str, install_repos: InstallRepos, tmp_path: Path
) -> None:
    lockfile = _wheelhouse_lock(install_repos, tmp_path)
    house = tmp_path / "house"
    house.mkdir()
    (house / NUMPY).write_bytes((install_repos.wheels / NUMPY).read_bytes())
    if kind == "symlink":
        (house / JAX).symlink_to(install_repos.wheels / JAX)  # the right bytes, through a link
    elif kind == "loop":
        (house / JAX).symlink_to(JAX)  # a link to itself
    elif kind == "fifo":
        os.mkfifo(house / JAX)
    else:
        (house / JAX).mkdir()
    code, _, err = in_process(
        "install", str(lockfile), "--name", "lab", "--offline", "--from", str(house)
    )
    assert code == USAGE_EXIT, err
    assert "regular file" in err or "symbolic link" in err or "leads outside" in err
    assert EnvLocation.named("lab").current() is None


def test_a_full_disk_during_fetch_is_exit_1_and_leaves_no_partial_file(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(artifacts.os, "replace", full)
    house = tmp_path / "house"
    with pytest.raises(InstallError) as err:
        fetch_all([_art(install_repos.wheels)], house)
    assert exit_code(err.value) == FAILURE_EXIT
    assert str(house / JAX) in str(err.value) and "free some space" in str(err.value)
    assert list(house.iterdir()) == []


def test_offline_install_from_a_relative_wheelhouse(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`fetch -d house` then `install --from house`, both with paths relative to the cwd."""
    monkeypatch.setenv("PIP_FIND_LINKS", str(install_repos.wheels))  # the user's wheelhouse
    lockfile = _wheelhouse_lock(install_repos, tmp_path)
    work = tmp_path / "work"
    work.mkdir()

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "gpuenv", *args],
            capture_output=True,
            text=True,
            cwd=work,
            timeout=300,
        )

    fetched = run("fetch", "../a.lock.yml", "-d", "house")
    assert fetched.returncode == 0, fetched.stderr
    assert sorted(p.name for p in (work / "house").iterdir()) == [JAX, NUMPY]
    installed = run(
        "install",
        "../a.lock.yml",
        "--name",
        "off",
        "--offline",
        "--from",
        "house",
        "--no-smoke-test",
    )
    assert installed.returncode == 0, installed.stderr
    current = EnvLocation.named("off").current()
    assert current is not None
    assert run_in(interpreter(current), "import jax; print(jax.__version__)") == "0.4.30"
    assert lockfile.exists()


def test_a_lockfile_url_naming_a_pipe_is_refused_without_blocking(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lockfile = _wheelhouse_lock(install_repos, tmp_path)
    fifo_dir = tmp_path / "pipes"
    fifo_dir.mkdir()
    # the user's own find-links folders: the pipe is in one (the origin rule does not refuse it)
    monkeypatch.setenv("PIP_FIND_LINKS", f"{fifo_dir} {install_repos.wheels}")
    os.mkfifo(fifo_dir / JAX)
    text = lockfile.read_text()
    lockfile.write_text(
        text.replace((install_repos.wheels / JAX).resolve().as_uri(), (fifo_dir / JAX).as_uri())
    )
    assert (fifo_dir / JAX).as_uri() in lockfile.read_text()
    code, _, err = in_process("fetch", str(lockfile), "-d", str(tmp_path / "house"))
    assert code == USAGE_EXIT and "not a regular file" in err, err


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("kind", ["right-bytes-outside", "right-bytes-inside", "dangling", "loop"])
def test_fetch_never_keeps_nor_writes_through_a_planted_link(
    kind: str, install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A link planted at a wheel's place in the fetch folder, even one to the right bytes,
    is refused by name (exit 2, never a traceback) and left as it is: never kept as the
    wheelhouse's file (install --from would read through it), never written through (a
    dangling link's target is not created)."""
    monkeypatch.setenv("PIP_FIND_LINKS", str(install_repos.wheels))  # the user's wheelhouse
    wheel = install_repos.wheels / JAX
    house, outside = tmp_path / "house", tmp_path / "outside"
    house.mkdir()
    outside.mkdir()
    target = {
        "right-bytes-outside": outside / JAX,
        "right-bytes-inside": house / "copy-of-jax.whl",
        "dangling": outside / "planted.whl",
        "loop": house / JAX,
    }[kind]
    if kind.startswith("right-bytes"):
        target.write_bytes(wheel.read_bytes())
    (house / JAX).symlink_to(target)
    before = _tree(tmp_path)
    lockfile = write_for_wheels(tmp_path / "a.lock.yml", [wheel])
    code, _, err = in_process("fetch", str(lockfile), "-d", str(house))
    assert code == USAGE_EXIT, err
    assert f"{house / JAX} is a symbolic link" in err or "loop of symbolic links" in err, err
    assert "Traceback" not in err
    assert os.readlink(house / JAX) == str(target)
    after = _tree(tmp_path)
    after.pop("a.lock.yml")
    assert after == before  # nothing written, through the link or beside it


def test_fetch_never_writes_through_a_link_planted_while_it_downloads(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The link appears after the checks, while the bytes arrive: the wheel is refused or the
    link replaced, and the file the link names keeps its bytes."""
    monkeypatch.setenv("PIP_FIND_LINKS", str(install_repos.wheels))
    wheel = install_repos.wheels / JAX
    house = tmp_path / "house"
    victim = tmp_path / "users-own.txt"
    victim.write_text("years of work\n")
    real_fill = artifacts._fill

    def fill_then_plant(out: Any, *args: Any, **kwargs: Any) -> Any:
        digests = real_fill(out, *args, **kwargs)
        (house / JAX).symlink_to(victim)
        return digests

    monkeypatch.setattr(artifacts, "_fill", fill_then_plant)
    lockfile = write_for_wheels(tmp_path / "a.lock.yml", [wheel])
    code, _, err = in_process("fetch", str(lockfile), "-d", str(house))
    assert victim.read_text() == "years of work\n"
    if code == 0:  # replaced: the wheelhouse holds the checked wheel itself
        assert not (house / JAX).is_symlink() and _sha(house / JAX) == _sha(wheel)
    else:
        assert code == USAGE_EXIT and "symbolic link" in err, err
        assert (house / JAX).is_symlink()
    assert [p.name for p in house.iterdir()] == [JAX]  # no partial file left beside it
