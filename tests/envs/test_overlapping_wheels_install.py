"""`gpuenv install` refuses a lockfile whose wheels overwrite each other's files (a tampered or
foreign one: gpuenv's own lock refuses to write it), before anything is changed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import gpuenv.lock.pipeline as pipeline
from gpuenv.envs.store import EnvLocation
from gpuenv.index.config import IndexConfig
from gpuenv.lock.pipeline import LockOptions, lock_plan
from gpuenv.resolve import resolve
from gpuenv.resolve.plan import PipRequirement
from installrepos import InstallRepos, gpuenv, jax_plan, make_lock, run_in
from localrepos import build_simple_index, build_wheel

SO = "nvidia/cudnn/lib/libcudnn.so.9"


def _foreign_lockfile(tmp_path: Path, describe, kb, monkeypatch) -> tuple[Path, str]:  # type: ignore[no-untyped-def]
    a = build_wheel(tmp_path / "w", "nvidia-cudnn-cu12", "9.5.1", files={SO: "for CUDA 12"})
    b = build_wheel(tmp_path / "w", "nvidia-cudnn-cu13", "9.26.0", files={SO: "for CUDA 13"})
    index = build_simple_index(tmp_path / "index", [a, b])
    plan = resolve(describe(None, None, "linux"), ["jax"], kb=kb, python="3.11")
    pip = (PipRequirement("nvidia-cudnn-cu12==9.5.1", None),)
    pip += (PipRequirement("nvidia-cudnn-cu13==9.26.0", None),)
    plan = dataclasses.replace(plan, pip=pip, companions=(), constraints=(), conda=())
    out = tmp_path / "foreign.conda-lock.yml"
    with monkeypatch.context() as m:  # a lock made by something that does not check
        m.setattr(pipeline, "_refuse_overlapping_wheels", lambda pip, run: [])
        lock_plan(plan, LockOptions(output=out, indexes=IndexConfig(index_url=index)))
    return out, index


def test_install_refuses_overlapping_wheels_and_keeps_the_old_environment(
    install_repos: InstallRepos, tmp_path: Path, describe, kb, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    good = make_lock(install_repos, tmp_path / "good.lock.yml", jax_plan())
    assert gpuenv("install", str(good), "--name", "lab").returncode == 0
    before = EnvLocation.named("lab").current()
    foreign, index = _foreign_lockfile(tmp_path, describe, kb, monkeypatch)
    # its index configured: the origin rule lets it through, the overlap check does not
    done = gpuenv("install", str(foreign), "--name", "lab", "--index", index)
    assert done.returncode == 1, done.stderr
    assert "nvidia_cudnn_cu12-9.5.1" in done.stderr and "nvidia_cudnn_cu13-9.26.0" in done.stderr
    assert SO in done.stderr and "Traceback" not in done.stderr
    assert EnvLocation.named("lab").current() == before
    assert before is not None
    assert run_in(before / "bin" / "python", "import jax; print(jax.__version__)") == "0.4.30"
    fresh = gpuenv("install", str(foreign), "--name", "other", "--index", index)
    assert fresh.returncode == 1 and EnvLocation.named("other").current() is None
