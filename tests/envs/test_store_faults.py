"""Full disk, read-only store, and what a kill after the swap leaves: a clear message, the old
environment untouched, no half-built version kept, leftovers found and removed.

Simulated faults (tests run as root, so chmod would not stop a write): an OSError with errno
ENOSPC raised where the new version's metadata is written, and one with EROFS raised where the
new link is made (the swap), each through monkeypatch in this process.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

import gpuenv.envs.transaction as transaction
from gpuenv.cache import cache_dir
from gpuenv.cli import main
from gpuenv.envs import fs
from gpuenv.envs.artifacts import artifacts_of, gather
from gpuenv.envs.errors import InstallError
from gpuenv.envs.filelock import exclusive
from gpuenv.envs.store import EnvLocation, read_metadata
from gpuenv.envs.transaction import InstallResult, install
from gpuenv.lock.load import load_locked
from gpuenv.uv.binary import find_uv
from installrepos import InstallRepos, gpuenv, jax_plan, make_lock, run_in
from storehelpers import envs_json, outside_folder, snapshot


def install_here(repos: InstallRepos, lockfile: Path, name: str = "lab") -> InstallResult:
    locked = load_locked(lockfile)
    files = gather(artifacts_of(locked), cache=cache_dir(), indexes=repos.indexes)
    return install(locked, EnvLocation.named(name), files, uv=find_uv())


def version_folders(name: str = "lab") -> list[str]:
    versions = EnvLocation.named(name).versions
    return sorted(p.name for p in versions.iterdir() if p.is_dir() and not p.is_symlink())


@pytest.fixture
def old_and_new(install_repos: InstallRepos, tmp_path: Path) -> tuple[Path, Path]:
    old = make_lock(install_repos, tmp_path / "a.lock.yml", jax_plan("0.4.30"))
    new = make_lock(install_repos, tmp_path / "b.lock.yml", jax_plan("0.4.31"))
    install_here(install_repos, old)
    return old, new


def no_space(path: Path, _data: object) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path / "gpuenv-env.json"))


def test_full_disk_during_install(
    install_repos: InstallRepos, old_and_new: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    live = EnvLocation.named("lab").current()
    assert live is not None
    before, folders = snapshot(live), version_folders()
    monkeypatch.setattr(transaction, "write_metadata", no_space)
    with pytest.raises(InstallError) as caught:
        install_here(install_repos, old_and_new[1])
    message = str(caught.value)
    assert message.startswith("cannot write ") and "free some space" in message
    assert "gpuenv-env.json" in message and "GPUENV_HOME" in message and "--prefix" in message
    assert EnvLocation.named("lab").current() == live and snapshot(live) == before
    assert version_folders() == folders  # the half-built version was removed


def test_read_only_store_at_the_swap(
    install_repos: InstallRepos, old_and_new: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    live = EnvLocation.named("lab").current()
    assert live is not None
    before, folders = snapshot(live), version_folders()

    def read_only(src: object, dst: object, **_kw: object) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(dst))

    with monkeypatch.context() as patched, pytest.raises(InstallError, match="read-only") as caught:
        patched.setattr(transaction.os, "symlink", read_only)
        install_here(install_repos, old_and_new[1])
    assert ".lab.new-link" in str(caught.value) and "GPUENV_HOME" in str(caught.value)
    assert EnvLocation.named("lab").current() == live and snapshot(live) == before
    assert version_folders() == folders
    assert run_in(live / "bin" / "python", "import jax; print(jax.__version__)") == "0.4.30"


def test_full_disk_through_the_cli_is_one_message_and_exit_1(
    install_repos: InstallRepos,
    old_and_new: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("PIP_INDEX_URL", install_repos.index)
    monkeypatch.setenv("UV_INDEX_URL", install_repos.index)
    monkeypatch.setattr(transaction, "write_metadata", no_space)
    with pytest.raises(SystemExit) as exited:
        main(["install", str(old_and_new[1]), "--name", "lab", "-q"])
    err = capsys.readouterr().err
    assert exited.value.code == 1, err
    assert err.startswith("gpuenv: error: cannot write ")
    assert "Traceback" not in err
    current = EnvLocation.named("lab").current()
    assert current is not None and read_metadata(current)["stack"] == {"jax": "0.4.30 [cpu]"}


def kill_right_after_the_swap(patched: pytest.MonkeyPatch) -> None:
    """What a kill between the swap and the rest leaves: the new version live, the old one
    neither deleted nor linked as the previous version (so a leftover)."""
    swap = transaction._swap

    def live_link_only(link: Path, target: Path) -> None:
        if not link.name.endswith(".previous"):
            swap(link, target)

    patched.setattr(transaction, "_swap", live_link_only)
    patched.setattr(fs, "remove_tree_quietly", lambda *_a: None)


def test_a_version_orphaned_after_the_swap_is_listed_and_cleaned(
    install_repos: InstallRepos, old_and_new: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    old_version = EnvLocation.named("lab").current()
    assert old_version is not None
    with monkeypatch.context() as patched:  # a kill right after the swap: the old version stays
        kill_right_after_the_swap(patched)
        install_here(install_repos, old_and_new[1])
    live = EnvLocation.named("lab").current()
    assert live is not None and live != old_version and old_version.is_dir()

    listed = gpuenv("envs")
    assert listed.returncode == 0 and "(leftover)" in listed.stdout
    assert str(old_version) in listed.stdout and "envs clean" in listed.stdout
    [left] = [e for e in envs_json(gpuenv("envs", "--json").stdout) if e["status"] == "leftover"]
    assert left["path"] == str(old_version) and left["name"] == "lab"

    with exclusive(EnvLocation.named("lab").lock_path):  # an install of lab is running
        busy = gpuenv("envs", "clean")
    assert busy.returncode == 0 and "install of lab is running" in busy.stderr
    assert old_version.is_dir()

    cleaned = gpuenv("envs", "clean")
    assert cleaned.returncode == 0 and str(old_version) in cleaned.stdout
    assert not old_version.exists() and version_folders() == [live.name]
    assert run_in(live / "bin" / "python", "import jax; print(jax.__version__)") == "0.4.31"
    assert "nothing to clean" in gpuenv("envs", "clean").stdout


def test_the_next_install_removes_leftovers(
    install_repos: InstallRepos,
    old_and_new: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    old_version = EnvLocation.named("lab").current()
    with monkeypatch.context() as patched:  # a kill right after the swap: the old version stays
        kill_right_after_the_swap(patched)
        install_here(install_repos, old_and_new[1])
    unfinished = EnvLocation.named("lab").version_dir("f" * 64)  # a killed build: no metadata
    (unfinished / "lib").mkdir(parents=True)
    third = make_lock(install_repos, tmp_path / "c.lock.yml", jax_plan("0.4.30", conda=()))
    (tmp_path / "c.lock.yml").write_text(third.read_text() + "# another lockfile\n")
    result = gpuenv("install", str(third), "--name", "lab")
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("removing a leftover version folder") == 2
    live = EnvLocation.named("lab").current()
    previous = EnvLocation.named("lab").previous_version()  # 0.4.31, which the install replaced
    assert live is not None and previous is not None
    assert version_folders() == sorted([live.name, previous.name])
    assert read_metadata(previous)["stack"] == {"jax": "0.4.31 [cpu]"}
    assert old_version is not None and not old_version.exists() and not unfinished.exists()


def test_clean_never_touches_a_link_in_the_versions_folder(tmp_path: Path) -> None:
    users = outside_folder(tmp_path)
    versions = EnvLocation.named("lab").versions
    versions.mkdir(parents=True)
    (versions / "lab-0123456789ab").symlink_to(users, target_is_directory=True)
    result = gpuenv("envs", "clean")
    assert result.returncode == 0 and "nothing to clean" in result.stdout
    assert (versions / "lab-0123456789ab").is_symlink()
    assert (users / "thesis.tex").read_text() == "years of work\n"


def test_a_read_only_store_during_removal_is_one_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Simulated: EROFS from the folder deletion (rmtree), after the link is gone."""
    from storehelpers import fake_env

    version = fake_env("lab")

    def read_only(path: object, *_a: object, **_kw: object) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))

    with monkeypatch.context() as patched, pytest.raises(SystemExit) as exited:
        patched.setattr(fs.shutil, "rmtree", read_only)
        main(["envs", "remove", "lab"])
    err = capsys.readouterr().err
    assert exited.value.code == 1 and "Traceback" not in err
    assert f"could not remove {version}" in err and "gpuenv envs clean" in err
    assert version.is_dir()  # now a leftover, which clean removes once the store is writable
    assert gpuenv("envs", "clean").returncode == 0 and not version.exists()


def test_a_no_op_install_removes_leftovers_unless_an_install_runs(
    install_repos: InstallRepos, old_and_new: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    old_version = EnvLocation.named("lab").current()
    with monkeypatch.context() as patched:  # a kill right after the swap: the old version stays
        kill_right_after_the_swap(patched)
        install_here(install_repos, old_and_new[1])
    assert old_version is not None and old_version.is_dir()
    with exclusive(EnvLocation.named("lab").lock_path):  # an install of lab is running
        busy = gpuenv("install", str(old_and_new[1]), "--name", "lab")
    assert busy.returncode == 0 and "nothing to do" in busy.stdout and old_version.is_dir()
    again = gpuenv("install", str(old_and_new[1]), "--name", "lab")  # the same lockfile: a no-op
    assert again.returncode == 0 and "nothing to do" in again.stdout
    live = EnvLocation.named("lab").current()
    assert live is not None and not old_version.exists() and version_folders() == [live.name]
