"""Removal and --prefix never follow a link gpuenv did not make and never leave the store."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuenv.envs import fs
from gpuenv.envs.errors import InstallError, StoreInputError
from gpuenv.envs.inventory import remove_environment
from gpuenv.envs.store import EnvLocation, check_name
from installrepos import InstallRepos, gpuenv, jax_plan, make_lock, run_in
from storehelpers import fake_env, outside_folder, snapshot, store


def test_remove_deletes_the_link_and_its_version_only(tmp_path: Path) -> None:
    lab = fake_env("lab")
    other = fake_env("other")
    before = snapshot(other)
    result = gpuenv("envs", "remove", "lab")
    assert result.returncode == 0, result.stderr
    assert not os.path.lexists(store() / "lab") and not lab.exists()
    assert snapshot(other) == before and (store() / "other").is_symlink()


def test_remove_refuses_an_alias_to_another_environment(tmp_path: Path) -> None:
    lab = fake_env("lab")
    before = snapshot(lab)
    (store() / "alias").symlink_to(store() / "lab", target_is_directory=True)
    (store() / "alias2").symlink_to(lab, target_is_directory=True)  # straight at lab's version
    for alias in ("alias", "alias2"):
        result = gpuenv("envs", "remove", alias)
        assert result.returncode == 2, result.stderr
        assert "did not make" in result.stderr and "Traceback" not in result.stderr
        assert (store() / alias).is_symlink()  # left alone, as it is not gpuenv's
        assert not (store() / ".versions" / f"{alias}.lock").exists()  # refused before a lock
    assert snapshot(lab) == before and EnvLocation.named("lab").current() == lab


def test_remove_refuses_a_link_to_a_folder_outside(tmp_path: Path) -> None:
    users = outside_folder(tmp_path)
    store().mkdir(parents=True)
    (store() / "evil").symlink_to(users, target_is_directory=True)
    result = gpuenv("envs", "remove", "evil")
    assert result.returncode == 2 and "did not make" in result.stderr
    assert (users / "thesis.tex").read_text() == "years of work\n"


def test_remove_refuses_a_link_named_like_a_version_but_outside(tmp_path: Path) -> None:
    """The link's text names `<name>-<h>`, but in another folder: not gpuenv's."""
    users = outside_folder(tmp_path)
    decoy = users / "evil-0123456789ab"
    decoy.mkdir()
    (decoy / "gpuenv-env.json").write_text("{}")
    store().mkdir(parents=True)
    (store() / "evil").symlink_to(decoy, target_is_directory=True)
    result = gpuenv("envs", "remove", "evil")
    assert result.returncode == 2
    assert decoy.is_dir() and (users / "thesis.tex").exists()


def test_remove_does_not_follow_links_inside_a_version(tmp_path: Path) -> None:
    users = outside_folder(tmp_path)
    lab = fake_env("lab")
    (lab / "data").symlink_to(users, target_is_directory=True)  # e.g. a user's dataset link
    result = gpuenv("envs", "remove", "lab")
    assert result.returncode == 0, result.stderr
    assert not lab.exists() and (users / "thesis.tex").read_text() == "years of work\n"


def test_remove_refuses_when_the_versions_folder_is_a_link(tmp_path: Path) -> None:
    """A path component that is a link: nothing through it is deleted, not even the link."""
    users = outside_folder(tmp_path)
    real = users / "lab-0123456789ab"
    real.mkdir()
    (real / "gpuenv-env.json").write_text("{}")
    store().mkdir(parents=True)
    (store() / ".versions").symlink_to(users, target_is_directory=True)
    (store() / "lab").symlink_to(store() / ".versions" / real.name, target_is_directory=True)
    with pytest.raises(InstallError, match="is a link"):
        remove_environment(EnvLocation.named("lab"))
    assert real.is_dir() and (store() / "lab").is_symlink()


def test_remove_of_a_folder_or_file_gpuenv_did_not_make(tmp_path: Path) -> None:
    store().mkdir(parents=True)
    (store() / "folder").mkdir()
    (store() / "folder" / "keep.txt").write_text("x")
    (store() / "stray").write_text("y")
    for name in ("folder", "stray"):
        result = gpuenv("envs", "remove", name)
        assert result.returncode == 2 and "Traceback" not in result.stderr
    assert (store() / "folder" / "keep.txt").exists() and (store() / "stray").exists()
    missing = gpuenv("envs", "remove", "nothing-here")
    assert missing.returncode == 2 and "no gpuenv environment" in missing.stderr


def test_remove_a_dangling_link_gpuenv_made_removes_only_the_link(tmp_path: Path) -> None:
    lab = fake_env("lab")
    for path in sorted(lab.rglob("*"), reverse=True):
        path.unlink()
    lab.rmdir()
    result = gpuenv("envs", "remove", "lab")
    assert result.returncode == 0, result.stderr
    assert not os.path.lexists(store() / "lab")


@pytest.mark.parametrize("name", ["../users-own", "..", ".versions", "a/b", "lab\n", "x\0y", ""])
def test_names_are_plain(name: str, tmp_path: Path) -> None:
    users = outside_folder(tmp_path)
    with pytest.raises(StoreInputError):
        check_name(name)
    if "\0" not in name:  # a NUL cannot travel in argv
        result = gpuenv("envs", "remove", name)
        assert result.returncode == 2 and "Traceback" not in result.stderr
    assert (users / "thesis.tex").exists()


def test_remove_tree_refuses_outside_and_links(tmp_path: Path) -> None:
    users = outside_folder(tmp_path)
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "link").symlink_to(users, target_is_directory=True)
    for bad in (users, root, root / "link", root / "link" / "x", root / ".." / "users-own"):
        with pytest.raises(InstallError):
            fs.check_removable(bad, root)
    fs.remove_tree(root / "sub", root)
    assert not (root / "sub").exists() and (users / "thesis.tex").exists()


# -- install --prefix ---------------------------------------------------------------------------


def test_prefix_link_to_a_store_environment_is_refused(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    lockfile = make_lock(install_repos, tmp_path / "a.lock.yml", jax_plan("0.4.30"))
    assert gpuenv("install", str(lockfile), "--name", "lab").returncode == 0
    lab = EnvLocation.named("lab").current()
    assert lab is not None
    before = snapshot(lab)
    newer = make_lock(install_repos, tmp_path / "b.lock.yml", jax_plan("0.4.31"))
    for target in (store() / "lab", lab):
        link = tmp_path / "work" / "env"
        link.parent.mkdir(exist_ok=True)
        link.symlink_to(target, target_is_directory=True)
        result = gpuenv("install", str(newer), "--prefix", str(link))
        assert result.returncode == 2, result.stderr
        assert "Traceback" not in result.stderr
        assert link.is_symlink() and os.readlink(link) == str(target)
        assert not (link.parent / ".env.gpuenv").exists()  # refused: no folder left behind
        link.unlink()
    assert snapshot(lab) == before
    assert run_in(lab / "bin" / "python", "import jax; print(jax.__version__)") == "0.4.30"


def test_prefix_link_to_an_outside_folder_is_refused(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    lockfile = make_lock(install_repos, tmp_path / "a.lock.yml", jax_plan())
    users = outside_folder(tmp_path)
    link = tmp_path / "env"
    link.symlink_to(users, target_is_directory=True)
    before = snapshot(tmp_path / "users-own")
    result = gpuenv("install", str(lockfile), "--prefix", str(link))
    assert result.returncode == 2 and "not a gpuenv environment" in result.stderr
    assert snapshot(tmp_path / "users-own") == before and link.is_symlink()
    assert not (tmp_path / ".env.gpuenv").exists()


def test_prefix_folder_with_data_is_refused_and_no_folder_is_made(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    lockfile = make_lock(install_repos, tmp_path / "a.lock.yml", jax_plan())
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "data.txt").write_text("keep me")
    before = sorted(p.name for p in tmp_path.iterdir())  # the lock made gpuenv's home there
    result = gpuenv("install", str(lockfile), "--prefix", str(precious))
    assert result.returncode == 2 and "not a gpuenv environment" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert sorted(p.name for p in precious.iterdir()) == ["data.txt"]


def test_prefix_inside_the_store_is_refused(install_repos: InstallRepos, tmp_path: Path) -> None:
    lockfile = make_lock(install_repos, tmp_path / "a.lock.yml", jax_plan())
    store().mkdir(parents=True)
    result = gpuenv("install", str(lockfile), "--prefix", str(store() / "sneaky"))
    assert result.returncode == 2 and "inside gpuenv's store" in result.stderr
    assert sorted(p.name for p in store().iterdir()) == []


def test_prefix_install_then_reinstall_replaces_only_its_own_version(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    first = make_lock(install_repos, tmp_path / "a.lock.yml", jax_plan("0.4.30"))
    second = make_lock(install_repos, tmp_path / "b.lock.yml", jax_plan("0.4.31"))
    env = tmp_path / "env"
    assert gpuenv("install", str(first), "--prefix", str(env)).returncode == 0
    done = gpuenv("install", str(second), "--prefix", str(env))
    assert done.returncode == 0, done.stderr
    assert run_in(env / "bin" / "python", "import jax; print(jax.__version__)") == "0.4.31"
    folder = tmp_path / ".env.gpuenv"
    versions = sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.is_symlink())
    # the live version and the one it replaced, kept for a rollback; nothing else
    assert len(versions) == 2 and all(v.startswith("env-") for v in versions)
    assert (folder / "env.previous").is_symlink()
    third = make_lock(install_repos, tmp_path / "c.lock.yml", jax_plan("0.4.30", conda=()))
    assert gpuenv("install", str(third), "--prefix", str(env)).returncode == 0
    assert len([p for p in folder.iterdir() if p.is_dir() and not p.is_symlink()]) == 2


def test_planted_links_for_the_lock_file_and_versions_folder_are_refused(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    lockfile = make_lock(install_repos, tmp_path / "a.lock.yml", jax_plan())
    users = outside_folder(tmp_path)
    before = snapshot(users)
    store().mkdir(parents=True)
    (store() / ".versions").mkdir()
    (store() / ".versions" / "lab.lock").symlink_to(users / "thesis.tex")
    result = gpuenv("install", str(lockfile), "--name", "lab")
    assert result.returncode == 1 and "is a link" in result.stderr
    (store() / ".versions" / "lab.lock").unlink()
    (store() / ".versions").rmdir()
    (store() / ".versions").symlink_to(users, target_is_directory=True)
    result = gpuenv("install", str(lockfile), "--name", "lab")
    assert result.returncode == 2 and "is a link" in result.stderr
    assert snapshot(users) == before and "Traceback" not in result.stderr
