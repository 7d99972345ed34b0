"""An environment of another stack is replaced only with --replace; the version an install
replaces stays restorable (`gpuenv envs rollback`) until the next install; `gpuenv install
LOCKFILE` without a name makes an environment named after the lockfile, never `default`."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gpuenv.commands.env_options import name_from_lockfile
from gpuenv.envs.store import EnvLocation, interpreter, read_metadata
from installrepos import InstallRepos, gpuenv, jax_plan, make_lock, run_in


def _stack(name: str) -> dict[str, str]:
    current = EnvLocation.named(name).current()
    assert current is not None
    return dict(read_metadata(current)["stack"])


def _on_the_gpu(repos: InstallRepos, out: Path) -> Path:
    """Another stack: the same framework planned for the GPU (a CUDA plan whose wheels are
    stand-ins: nothing here needs a GPU to install them)."""
    base = jax_plan()
    choice = dataclasses.replace(base.frameworks["jax"], variant="cuda12", cuda="12.9", gpu=True)
    plan = dataclasses.replace(base, accelerator="cuda", frameworks={"jax": choice})
    return make_lock(repos, out, plan)


def test_another_stack_needs_replace_and_the_old_one_can_be_rolled_back(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    jax = make_lock(install_repos, tmp_path / "jax.lock.yml", jax_plan())
    assert gpuenv("install", str(jax), "--name", "lab").returncode == 0
    other = _on_the_gpu(install_repos, tmp_path / "other.lock.yml")
    refused = gpuenv("install", str(other), "--name", "lab")
    assert refused.returncode == 2, refused.stderr
    assert "--replace" in refused.stderr and "jax 0.4.30 [cpu]" in refused.stderr
    assert _stack("lab") == {"jax": "0.4.30 [cpu]"}
    dry = gpuenv("install", str(other), "--name", "lab", "--dry-run")
    assert dry.returncode == 2 and "--replace" in dry.stderr

    done = gpuenv("install", str(other), "--name", "lab", "--replace")
    assert done.returncode == 0, done.stderr
    assert _stack("lab") == {"jax": "0.4.30 [cuda12]"}
    back = gpuenv("envs", "rollback", "lab")
    assert back.returncode == 0, back.stderr
    assert _stack("lab") == {"jax": "0.4.30 [cpu]"} and "jax 0.4.30 [cpu] again" in back.stdout
    live = EnvLocation.named("lab").current()
    assert live is not None
    assert run_in(interpreter(live), "import jax; print(jax.__version__)") == "0.4.30"
    assert gpuenv("envs", "rollback", "lab").returncode == 0
    assert _stack("lab") == {"jax": "0.4.30 [cuda12]"}


def test_an_upgrade_of_the_same_stack_needs_no_replace(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    old = make_lock(install_repos, tmp_path / "a.lock.yml", jax_plan("0.4.30"))
    new = make_lock(install_repos, tmp_path / "b.lock.yml", jax_plan("0.4.31"))
    assert gpuenv("install", str(old), "--name", "lab").returncode == 0
    done = gpuenv("install", str(new), "--name", "lab")
    assert done.returncode == 0, done.stderr
    assert _stack("lab") == {"jax": "0.4.31 [cpu]"}


def test_without_a_name_the_lockfile_names_the_environment(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    other = _on_the_gpu(install_repos, tmp_path / "default.lock.yml")
    assert gpuenv("install", str(other)).returncode == 0  # stands in for setup's default
    jax = make_lock(install_repos, tmp_path / "jax.conda-lock.yml", jax_plan())
    done = gpuenv("install", str(jax))
    assert done.returncode == 0, done.stderr
    assert _stack("jax") == {"jax": "0.4.30 [cpu]"}
    assert _stack("default") == {"jax": "0.4.30 [cuda12]"}
    assert "gpuenv verify --name jax" in done.stdout


def test_rollback_with_nothing_to_roll_back_to_is_an_error(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    jax = make_lock(install_repos, tmp_path / "jax.lock.yml", jax_plan())
    assert gpuenv("install", str(jax), "--name", "lab").returncode == 0
    done = gpuenv("envs", "rollback", "lab")
    assert done.returncode == 2 and "no previous version" in done.stderr
    assert gpuenv("envs", "rollback", "../x").returncode == 2


def test_remove_takes_the_kept_previous_version_too(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    old = make_lock(install_repos, tmp_path / "a.lock.yml", jax_plan("0.4.30"))
    new = make_lock(install_repos, tmp_path / "b.lock.yml", jax_plan("0.4.31"))
    assert gpuenv("install", str(old), "--name", "lab").returncode == 0
    assert gpuenv("install", str(new), "--name", "lab").returncode == 0
    where = EnvLocation.named("lab")
    assert where.previous_version() is not None
    assert gpuenv("envs", "remove", "lab").returncode == 0
    assert [p.name for p in where.versions.iterdir() if p.name != "lab.lock"] == []


@pytest.mark.parametrize(
    ("file", "name"),
    [
        ("jax.conda-lock.yml", "jax"),
        ("pascal-workstation.conda-lock.yml", "pascal-workstation"),
        ("lab.lock.yml", "lab"),
        ("pylock.lab.toml", "lab"),
        ("pylock.toml", "default"),
        ("my stack.conda-lock.yml", "default"),  # no valid name: the default
        ("CON.conda-lock.yml", "default"),  # a Windows device name
        (".conda-lock.yml", "default"),
        ("-x.yml", "default"),
    ],
)
def test_the_name_a_lockfile_gives(file: str, name: str) -> None:
    assert name_from_lockfile(Path("/somewhere") / file) == name


def test_the_install_says_what_it_replaces_and_only_then(
    install_repos: InstallRepos, tmp_path: Path
) -> None:
    old = make_lock(install_repos, tmp_path / "a.lock.yml", jax_plan("0.4.30"))
    new = make_lock(install_repos, tmp_path / "b.lock.yml", jax_plan("0.4.31"))
    first = gpuenv("install", str(old), "--name", "said")
    assert first.returncode == 0, first.stderr
    assert "replacing" not in first.stdout + first.stderr
    second = gpuenv("install", str(new), "--name", "said")
    assert second.returncode == 0, second.stderr
    [line] = [ln for ln in (second.stdout + second.stderr).splitlines() if "replacing" in ln]
    assert "jax 0.4.30 [cpu]" in line and "jax 0.4.31 [cpu]" in line, line
