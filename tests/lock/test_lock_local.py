"""lock through the real uv and the real py-rattler, against local repositories built by the tests."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gpuenv.lock import LockOptions, check_lockfile, lock_plan
from gpuenv.lock.errors import SourceUnreachableError, UnsatisfiableError
from gpuenv.lock.load import load_locked
from gpuenv.resolve import resolve
from gpuenv.resolve.plan import PipRequirement, Plan
from stacks import LocalRepos

LAPTOP = dict(gpu="GeForce 940M", driver="457.49")


def local_plan(plan: Plan, repos: LocalRepos) -> Plan:
    """The same plan, with its PyTorch index pointing at the local stand-in."""
    pip = tuple(
        PipRequirement(p.requirement, repos.torch_index if p.index else None) for p in plan.pip
    )
    return dataclasses.replace(plan, pip=pip)


def options(repos: LocalRepos, out: Path, **kw: object) -> LockOptions:
    base = dict(output=out, channels=(repos.channel,), indexes=repos.indexes, exclude_newer="none")
    return LockOptions(**{**base, **kw})  # type: ignore[arg-type]


@pytest.fixture
def windows_plan(describe, kb, repos: LocalRepos) -> Plan:
    plan = resolve(describe(**LAPTOP, os_name="windows"), ["torch", "tensorflow"], kb=kb)
    return local_plan(plan, repos)


def test_windows_torch_and_tensorflow_lock(
    windows_plan: Plan, repos: LocalRepos, tmp_path: Path
) -> None:
    out = tmp_path / "laptop.lock.yml"
    result = lock_plan(windows_plan, options(repos, out))
    locked = load_locked(out)  # parsed by conda-lock's own parser
    assert locked.platform == "win-64" and locked.python == "3.10"
    pip = {p.name: p for p in locked.pip}
    # the CUDA 11.8 build came from its own index, not the default index's torch 2.7.1
    assert pip["torch"].version == "2.7.1+cu118"
    assert "pytorch-cu118" in pip["torch"].url and pip["torch"].url.endswith("win_amd64.whl")
    assert pip["numpy"].version == "1.26.4"  # the knowledge base's numpy<2 for TF 2.10
    assert all(len(p.sha256) == 64 for p in locked.pip)
    conda = {r["name"]: r for r in locked.conda}
    assert set(conda) >= {"python", "pip", "cudatoolkit", "cudnn"}
    assert conda["cudatoolkit"]["version"].startswith("11.2")
    assert conda["python"]["version"].startswith("3.10")
    assert all(r["md5"] and r["sha256"] for r in locked.conda)
    assert result.inputs_hash == locked.inputs_hash


def test_same_inputs_give_byte_identical_files(
    windows_plan: Plan, repos: LocalRepos, tmp_path: Path
) -> None:
    first, second = tmp_path / "a" / "x.lock.yml", tmp_path / "b" / "x.lock.yml"
    lock_plan(windows_plan, options(repos, first))
    lock_plan(windows_plan, options(repos, second))
    assert first.read_bytes() == second.read_bytes()


def test_linux_target_from_the_same_machine(
    describe, kb, repos: LocalRepos, tmp_path: Path
) -> None:
    plan = local_plan(
        resolve(
            describe("GeForce GTX 1080 Ti", "470.256.02", "linux"),
            ["torch<2.8"],
            kb=kb,
            python="3.10",
        ),
        repos,
    )
    assert plan.frameworks["torch"].variant == "cu118"
    out = tmp_path / "linux.lock.yml"
    lock_plan(plan, options(repos, out))
    torch = next(p for p in load_locked(out).pip if p.name == "torch")
    assert torch.url.endswith("manylinux_2_28_x86_64.whl")


def test_portable_entries_name_no_host(
    windows_plan: Plan, repos: LocalRepos, tmp_path: Path
) -> None:
    out = tmp_path / "portable.lock.yml"
    lock_plan(windows_plan, options(repos, out, portable=True))
    locked = load_locked(out)
    by_name = {p.name: p for p in locked.pip}
    assert by_name["numpy"].url == "index:///numpy/numpy-1.26.4-cp310-cp310-win_amd64.whl"
    assert by_name["numpy"].portable
    # a build that only its own index publishes keeps that index's address
    assert not by_name["torch"].portable
    assert repos.default_index not in out.read_text()


def test_check_tells_a_stale_lockfile(
    windows_plan: Plan, repos: LocalRepos, tmp_path: Path, describe, kb
) -> None:
    out = tmp_path / "x.lock.yml"
    opts = options(repos, out)
    lock_plan(windows_plan, opts)
    assert check_lockfile(windows_plan, opts) == (True, f"{out} is up to date")
    older = local_plan(
        resolve(describe(**LAPTOP, os_name="windows"), ["torch<2.7", "tensorflow"], kb=kb), repos
    )
    ok, message = check_lockfile(older, opts)
    assert not ok and "torch 2.7.1 [cu118] -> 2.6.0 [cu118]" in message


def test_unsatisfiable_lock_names_the_conflict(
    windows_plan: Plan, repos: LocalRepos, tmp_path: Path
) -> None:
    plan = dataclasses.replace(windows_plan, companions=(*windows_plan.companions, "numpy>=2"))
    with pytest.raises(UnsatisfiableError) as err:
        lock_plan(plan, options(repos, tmp_path / "x.lock.yml"))
    assert "numpy" in str(err.value)
    assert not (tmp_path / "x.lock.yml").exists()


def test_unreachable_index_is_named(
    windows_plan: Plan, repos: LocalRepos, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UV_HTTP_RETRIES", "0")  # a closed port: uv's retries only cost time
    dead = "http://127.0.0.1:9/simple/"
    plan = dataclasses.replace(
        windows_plan,
        pip=tuple(
            PipRequirement(p.requirement, dead if p.index else None) for p in windows_plan.pip
        ),
    )
    with pytest.raises(SourceUnreachableError) as err:
        lock_plan(plan, options(repos, tmp_path / "x.lock.yml"))
    assert "127.0.0.1:9" in str(err.value)


def test_failed_lock_leaves_the_good_lockfile(
    windows_plan: Plan, repos: LocalRepos, tmp_path: Path
) -> None:
    out = tmp_path / "x.lock.yml"
    lock_plan(windows_plan, options(repos, out))
    good = out.read_bytes()
    broken = dataclasses.replace(windows_plan, companions=("numpy>=3",))
    with pytest.raises(UnsatisfiableError):
        lock_plan(broken, options(repos, out))
    assert out.read_bytes() == good
    assert [p.name for p in tmp_path.iterdir()] == ["x.lock.yml"]  # no temporary left behind


def test_conda_part_needs_its_virtual_packages(
    windows_plan: Plan, repos: LocalRepos, tmp_path: Path
) -> None:
    # cudatoolkit 11.2 needs __cuda >= 11.2: a plan whose frameworks need no CUDA gives none
    cpu = dataclasses.replace(windows_plan, frameworks={})
    with pytest.raises(UnsatisfiableError, match="__cuda"):
        lock_plan(cpu, options(repos, tmp_path / "x.lock.yml"))


def test_pylock_export_for_a_pip_only_plan(describe, kb, repos: LocalRepos, tmp_path: Path) -> None:
    import tomllib
    from packaging.pylock import Pylock

    plan = local_plan(
        resolve(
            describe("GeForce GTX 1080 Ti", "470.256.02", "linux"),
            ["torch<2.8"],
            kb=kb,
            python="3.10",
        ),
        repos,
    )
    out = tmp_path / "pylock.toml"
    lock_plan(plan, options(repos, out, format="pylock"))
    lock = Pylock.from_dict(tomllib.loads(out.read_text()))
    names = {p.name for p in lock.packages}
    assert {"torch", "numpy", "filelock"} <= names
    assert all(w.hashes["sha256"] for p in lock.packages for w in p.wheels or [])
