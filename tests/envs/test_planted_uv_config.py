"""An install run from a folder others can write (a shared /tmp) is not steered by what was
planted there: a uv.toml above the working folder configures uv from its working folder
upwards, and a jax.py in the working folder would be imported by a smoke test run from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuenv.envs.store import EnvLocation, interpreter
from installrepos import InstallRepos, gpuenv, jax_plan, make_lock, run_in


@pytest.mark.parametrize(
    ("home_inside", "working_dir"),
    [(False, False), (True, False), (False, True)],
    ids=["home-elsewhere", "home-below-it", "uv-working-dir-there"],
)
def test_an_install_from_a_shared_folder_ignores_what_was_planted_there(
    install_repos: InstallRepos,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    home_inside: bool,
    working_dir: bool,
) -> None:
    """`working_dir`: UV_WORKING_DIR names the shared folder (uv would change to it and read
    its uv.toml): the work folder gpuenv names to uv wins."""
    lockfile = make_lock(install_repos, tmp_path / "jax.lock.yml", jax_plan())
    shared = tmp_path / "shared-tmp"
    shared.mkdir()
    elsewhere = shared / "planted-target"
    (shared / "uv.toml").write_text(f"[pip]\ntarget = '{elsewhere}'\n")
    (shared / "jax.py").write_text("raise SystemExit('the planted jax.py ran')\n")
    work = shared / "project"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("UV_NO_CONFIG", raising=False)
    monkeypatch.setenv("TMPDIR", str(shared))
    if home_inside:  # even gpuenv's own folders below it: its work folder ends uv's search
        monkeypatch.setenv("GPUENV_HOME", str(shared / "home"))
    if working_dir:
        monkeypatch.setenv("UV_WORKING_DIR", str(shared))
    done = gpuenv("install", str(lockfile), "--name", "lab")
    assert done.returncode == 0, done.stderr
    assert not elsewhere.exists()
    current = EnvLocation.named("lab").current()
    assert current is not None
    assert run_in(interpreter(current), "import jax; print(jax.__version__)") == "0.4.30"


def test_the_smoke_test_does_not_import_from_the_working_folder(
    install_repos: InstallRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lockfile = make_lock(install_repos, tmp_path / "jax.lock.yml", jax_plan())
    work = tmp_path / "cwd"
    work.mkdir()
    (work / "jax.py").write_text("raise SystemExit('the planted jax.py ran')\n")
    monkeypatch.chdir(work)
    done = gpuenv("install", str(lockfile), "--name", "lab")
    assert done.returncode == 0, done.stderr
    assert "planted" not in done.stderr
