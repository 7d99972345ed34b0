"""Nothing planted beside gpuenv steers a lock (threat model: a shared machine where anyone can
write /tmp). uv looks upwards from its project for a workspace root, and from its working folder
for a uv.toml: a planted pyproject.toml whose workspace takes in gpuenv's temporary project would
route a package to the planter's index, and a planted uv.toml would reconfigure uv."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from gpuenv.fs.workdir import WorkdirError, checked_work_root, stale_workdirs
from gpuenv.index.config import IndexConfig
from gpuenv.resolve import resolve
from gpuenv.resolve.plan import PipRequirement
from localrepos import build_simple_index, build_wheel, find_uv, sha256_file
from lockdata import compile_pip

pytestmark = pytest.mark.skipif(find_uv() is None, reason="uv is not installed")


def _plant(shared: Path, evil_index: str) -> None:
    members = ", ".join(f'"{"/".join(["*"] * depth)}"' for depth in range(1, 7))
    (shared / "pyproject.toml").write_text(
        "[project]\nname = 'planted'\nversion = '0'\n"
        f'[tool.uv.workspace]\nmembers = [{members}, "gpuenv-*"]\n'
        "[tool.uv.sources]\ntinyfw = { index = 'planted' }\n"
        f"[[tool.uv.index]]\nname = 'planted'\nurl = '{evil_index}'\nexplicit = true\n"
    )
    # extra indexes come before the default one: this would win over what gpuenv passes
    (shared / "uv.toml").write_text(f"[pip]\nextra-index-url = ['{evil_index}']\n")


@pytest.mark.parametrize(
    ("uv_config", "working_dir"),
    [(True, False), (False, False), (True, True)],
    ids=["uv-config-on", "uv-config-off", "uv-working-dir-there"],
)
def test_a_planted_workspace_and_uv_toml_do_not_steer_the_lock(
    tmp_path, describe, kb, monkeypatch, uv_config, working_dir
) -> None:  # type: ignore[no-untyped-def]
    """`working_dir`: UV_WORKING_DIR names the shared folder (uv would change to it and read
    its uv.toml): the folder gpuenv names to uv wins."""
    tag = "py3-none-any"
    good = build_wheel(tmp_path / "good", "tinyfw", "1.0", tag=tag)
    evil = build_wheel(tmp_path / "evil", "tinyfw", "1.0", tag=tag, files={"tinyfw/x.py": "1"})
    assert sha256_file(good) != sha256_file(evil)
    good_index = build_simple_index(tmp_path / "good-index", [good])
    evil_index = build_simple_index(tmp_path / "evil-index", [evil])
    shared = tmp_path / "shared-tmp"  # /tmp on a lab machine: the planter can write it
    shared.mkdir()
    _plant(shared, evil_index)
    # gpuenv's temporary files, its home and the user's working folder all below it: the
    # defence must hold even then
    monkeypatch.setenv("TMPDIR", str(shared))
    monkeypatch.setenv("GPUENV_HOME", str(shared / "home"))
    monkeypatch.chdir(shared)
    if uv_config:
        monkeypatch.delenv("UV_NO_CONFIG", raising=False)
    if working_dir:
        monkeypatch.setenv("UV_WORKING_DIR", str(shared))
    plan = resolve(describe(None, None, "linux"), ["torch"], kb=kb, python="3.11")
    plan = dataclasses.replace(
        plan, pip=(PipRequirement("tinyfw==1.0", None),), companions=(), constraints=()
    )
    lock = compile_pip(
        plan, indexes=IndexConfig(index_url=good_index, origin="test"), exclude_newer=None
    )
    (artifact,) = lock.artifacts
    assert artifact.sha256 == sha256_file(good)
    assert not list((shared / "home" / "work").iterdir())  # its folder is gone afterwards


def test_the_work_root_is_this_users_alone(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("GPUENV_HOME", str(tmp_path / "home"))
    root = checked_work_root()
    assert root == tmp_path / "home" / "work"
    assert root.stat().st_mode & 0o777 == 0o700


@pytest.mark.skipif(os.name == "nt", reason="POSIX modes and links")
@pytest.mark.parametrize("how", ["link", "world-writable", "file"])
def test_an_unsafe_work_root_is_refused(tmp_path, monkeypatch, how) -> None:  # type: ignore[no-untyped-def]
    home = tmp_path / "home"
    home.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    if how == "link":
        (home / "work").symlink_to(elsewhere)
    elif how == "world-writable":
        (home / "work").mkdir()
        (home / "work").chmod(0o777)
    else:
        (home / "work").write_text("")
    monkeypatch.setenv("GPUENV_HOME", str(home))
    with pytest.raises(WorkdirError, match="not safe to use"):
        checked_work_root()


def test_leftovers_of_dead_runs_are_found_and_live_ones_kept(tmp_path) -> None:  # type: ignore[no-untyped-def]
    dead = tmp_path / "lock-999999999-abc"  # no such process
    live = tmp_path / f"lock-{os.getpid()}-def"
    other = tmp_path / "notes"
    for folder in (dead, live, other):
        folder.mkdir()
    (tmp_path / "install-999999998-x").symlink_to(other)  # a link is never a leftover
    assert stale_workdirs(tmp_path) == [dead]
