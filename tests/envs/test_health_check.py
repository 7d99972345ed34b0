"""`gpuenv verify --health` for a Slurm prolog or a node health check: silent and exit 0 when
the environment is as planned; one line per problem and exit 1 when a framework is missing or
not the planned version, the interpreter cannot start, or a CUDA plan finds no GPU; bounded in
time as a whole; no framework imported unless --import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuenv.cache import cache_dir
from gpuenv.envs.artifacts import artifacts_of, gather
from gpuenv.envs.store import EnvLocation, interpreter
from gpuenv.envs.transaction import install
from gpuenv.lock.load import load_locked
from installrepos import InstallRepos, gpuenv, jax_plan, make_lock
from localrepos import find_uv
from storehelpers import fake_env, fake_metadata


@pytest.fixture
def lab(install_repos: InstallRepos, tmp_path: Path) -> Path:
    """The stand-in jax 0.4.30 stack installed as `lab`; its version folder."""
    lockfile = make_lock(install_repos, tmp_path / "jax.conda-lock.yml", jax_plan())
    locked = load_locked(lockfile)
    files = gather(artifacts_of(locked), cache=cache_dir(), indexes=install_repos.indexes)
    result = install(locked, EnvLocation.named("lab"), files, uv=find_uv())
    return result.env_dir


def _replace(path: Path, change: Callable[[str], str]) -> None:
    """A new file in place of `path`: uv links installed files to its cache, which must stay."""
    text = change(path.read_text())
    path.unlink()
    path.write_text(text)


def _health(*extra: str) -> subprocess.CompletedProcess[str]:
    return gpuenv("verify", "--name", "lab", "--health", *extra)


def test_a_healthy_environment_is_silent(lab: Path) -> None:
    done = _health()
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    report = json.loads(_health("--json").stdout)
    assert report["ok"] is True and report["problems"] == [] and report["seconds"] < 10


def test_a_framework_removed_or_replaced_is_one_line_each(lab: Path) -> None:
    site = next(lab.glob("lib/python*/site-packages"))
    (dist,) = site.glob("jax-0.4.30.dist-info")
    _replace(dist / "METADATA", lambda text: text.replace("Version: 0.4.30", "Version: 0.4.99"))
    done = _health()
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "gpuenv verify --health: lab: jax 0.4.99 is installed, 0.4.30 was planned"
    )
    for path in sorted(dist.iterdir()):
        path.unlink()
    dist.rmdir()
    gone = _health()
    assert gone.returncode == 1 and "jax is not installed (planned 0.4.30)" in gone.stderr


def test_import_is_asked_for_and_catches_a_broken_package(lab: Path) -> None:
    site = next(lab.glob("lib/python*/site-packages"))
    _replace(site / "jax" / "__init__.py", lambda _: "raise ImportError('broken on purpose')\n")
    assert _health().returncode == 0  # versions only: nothing imported
    done = _health("--import")
    assert done.returncode == 1 and "broken on purpose" in done.stderr


def _venv_env(name: str, plan: dict[str, object]) -> Path:
    version = fake_env(name, metadata={**fake_metadata(name), "plan": plan})
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(version)], check=True)
    return version


def test_a_cuda_plan_without_a_gpu_fails(tmp_path: Path) -> None:
    _venv_env("lab", {"accelerator": "cuda", "driver": "535.183.01", "frameworks": {}})
    env = {"PATH": str(tmp_path)}  # no nvidia-smi anywhere: as on a node whose GPU is gone
    done = gpuenv("verify", "--name", "lab", "--health", env=env)
    assert done.returncode == 1 and "no NVIDIA GPU is visible" in done.stderr


def test_the_check_is_bounded_as_a_whole(tmp_path: Path) -> None:
    version = _venv_env("lab", {"accelerator": "cpu", "frameworks": {"jax": {"version": "1"}}})
    python = interpreter(version)
    python.unlink()
    python.write_text("#!/bin/sh\nsleep 30\n")
    os.chmod(python, 0o755)
    start = time.monotonic()
    done = gpuenv("verify", "--name", "lab", "--health", "--timeout", "2")
    assert time.monotonic() - start < 20
    assert done.returncode == 1 and "did not finish within 2s" in done.stderr


def test_a_missing_environment_and_wrong_flags(tmp_path: Path) -> None:
    done = gpuenv("verify", "--name", "ghost", "--health")
    assert done.returncode == 1 and "no gpuenv environment" in done.stderr
    wrong = gpuenv("verify", "--import")
    assert wrong.returncode == 2 and "--import goes with --health" in wrong.stderr
