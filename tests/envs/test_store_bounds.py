"""The store's bounds, each check seen failing when it is taken away (issue 28): a --prefix that
is or holds the store, even before the store exists; `envs clean` looking again under the
environment's lock before it removes a leftover."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuenv.envs import inventory
from gpuenv.envs.inventory import remove_leftover, scan_store
from gpuenv.envs.store import EnvLocation, store_root
from installrepos import InstallRepos, gpuenv, jax_plan, make_lock
from storehelpers import fake_env, snapshot


@pytest.mark.parametrize("where", ["store", "home", "above-home"])
def test_a_prefix_that_would_be_or_hold_the_store_is_refused_before_the_store_exists(
    where: str, install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Installed there, the environment's link would take the store's place, or its folder
    would hold the store: refused, and nothing is made, while none of those folders exists
    yet (and again once the store does)."""
    lockfile = make_lock(install_repos, tmp_path / "a.lock.yml", jax_plan())
    fresh = tmp_path / "fresh"  # a GPUENV_HOME nothing has used yet
    monkeypatch.setenv("GPUENV_HOME", str(fresh / "home"))
    store = store_root()
    assert store == fresh / "home" / "envs"
    prefix = {"store": store, "home": store.parent, "above-home": fresh}[where]
    made_by_hand: list[Path] = []
    for round in range(2):
        before = sorted(p.name for p in tmp_path.iterdir())
        result = gpuenv("install", str(lockfile), "--prefix", str(prefix), "--no-smoke-test")
        assert result.returncode == 2, result.stderr
        assert "gpuenv's store" in result.stderr and "Traceback" not in result.stderr
        assert sorted(p.name for p in tmp_path.iterdir()) == before
        if round == 0:
            assert not fresh.exists()
        else:  # nothing but the store made by hand below fresh
            assert sorted(fresh.rglob("*")) == made_by_hand
        store.mkdir(parents=True, exist_ok=True)
        made_by_hand = sorted(fresh.rglob("*"))


def test_a_prefix_beside_the_store_is_not_inside_it(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    """`<home>/envs-old` only shares a prefix with `<home>/envs`: an install goes there."""
    lockfile = make_lock(install_repos, tmp_path / "a.lock.yml", jax_plan())
    beside = store_root().with_name(store_root().name + "-old")
    result = gpuenv("install", str(lockfile), "--prefix", str(beside), "--no-smoke-test")
    assert result.returncode == 0, result.stderr
    assert EnvLocation.prefix(beside).current() is not None


def test_clean_leaves_a_leftover_an_install_made_live_since_the_scan(tmp_path: Path) -> None:
    """`envs clean` scans, then removes each leftover under its environment's lock. Between
    the two an install may have switched the environment to that very folder (or made it its
    previous version): it is looked at again under the lock, and kept."""
    live = fake_env("lab")
    location = EnvLocation.named("lab")
    aside = location.version_dir("b" * 64)
    aside.mkdir()
    (aside / "payload.txt").write_text("the new version\n")
    [leftover] = scan_store().leftovers
    assert leftover.path == aside
    # an install finishes after the scan: the link now names the folder the scan called a
    # leftover, and the version it replaced is kept as the previous one
    os.unlink(location.link)
    os.symlink(aside, location.link, target_is_directory=True)
    os.symlink(live, location.previous_link, target_is_directory=True)
    before = snapshot(store_root())
    assert remove_leftover(leftover) is False
    after = snapshot(store_root())
    after.pop(str(location.lock_path))  # the environment's lock file, taken
    assert after == before and location.linked_version() == aside


def test_clean_removes_a_leftover_that_still_is_one() -> None:
    fake_env("lab")
    aside = EnvLocation.named("lab").version_dir("c" * 64)
    aside.mkdir()
    [leftover] = scan_store().leftovers
    assert remove_leftover(leftover) is True and not aside.exists()


def test_clean_leaves_a_leftover_whose_environment_is_being_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An install holds the environment's lock: clean does not wait, and removes nothing."""
    from gpuenv.envs.errors import LockTimeout

    fake_env("lab")
    aside = EnvLocation.named("lab").version_dir("d" * 64)
    aside.mkdir()
    [leftover] = scan_store().leftovers

    def busy(*args: object, **kwargs: object) -> object:
        raise LockTimeout("another install holds it")

    monkeypatch.setattr("gpuenv.envs.filelock.exclusive", busy)
    assert remove_leftover(leftover) is False and aside.is_dir()
    assert inventory.leftovers_of(EnvLocation.named("lab")) == [aside]
