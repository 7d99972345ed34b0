"""Real stacks locked against the real default index (marked `network`: deselect with -m 'not network').

uv resolves metadata only here; no framework wheel is downloaded.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.version import Version

from gpuenv.index.config import IndexConfig
from gpuenv.lock import LockOptions, lock_plan
from gpuenv.lock.load import load_locked
from gpuenv.resolve import resolve

pytestmark = pytest.mark.network


@pytest.fixture(autouse=True)
def real_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default index as uv knows it (this machine's pip settings are local mirrors)."""
    monkeypatch.delenv("UV_NO_CONFIG", raising=False)


def lock(plan, tmp_path: Path, name: str = "x.lock.yml") -> Path:  # type: ignore[no-untyped-def]
    out = tmp_path / name
    lock_plan(plan, LockOptions(output=out, indexes=IndexConfig(), portable=True))
    return out


def versions(path: Path) -> dict[str, Version]:
    return {p.name: Version(p.version) for p in load_locked(path).pip}


def test_tensorflow_on_wsl2_with_an_rtx_3060(describe, kb, tmp_path: Path) -> None:
    plan = resolve(describe("GeForce RTX 3060", "560.94", "wsl"), ["tensorflow"], kb=kb)
    assert plan.platform == "linux-64" and plan.frameworks["tensorflow"].gpu
    locked = versions(lock(plan, tmp_path))
    assert locked["tensorflow"] == Version(plan.frameworks["tensorflow"].version)
    assert any(name.startswith("nvidia-cudnn-cu") for name in locked)


def test_tensorflow_2_10_1_on_cpu_linux_keeps_numpy_below_2(describe, kb, tmp_path: Path) -> None:
    plan = resolve(describe(None, None, "linux", "x86_64"), ["tensorflow==2.10.1"], kb=kb)
    locked = versions(lock(plan, tmp_path))
    # a CPU plan takes TensorFlow's CPU-only package where it exists (issue 19)
    assert plan.frameworks["tensorflow"].package == "tensorflow-cpu"
    assert locked["tensorflow-cpu"] == Version("2.10.1")
    assert locked["numpy"] < Version("2")


def test_tensorflow_on_a_gtx_1080_ti_keeps_a_cudnn_with_pascal_kernels(
    describe, kb, tmp_path: Path
) -> None:
    plan = resolve(describe("GeForce GTX 1080 Ti", "580.95.05", "linux"), ["tensorflow"], kb=kb)
    assert plan.frameworks["tensorflow"].gpu
    locked = versions(lock(plan, tmp_path))
    cudnn = next(v for n, v in locked.items() if n.startswith("nvidia-cudnn-cu"))
    assert cudnn < Version("9.11"), "cuDNN 9.11 dropped compute capability below 7.5"


def test_locking_twice_gives_identical_files_with_hashes(describe, kb, tmp_path: Path) -> None:
    plan = resolve(describe(None, None, "linux", "x86_64"), ["jax"], kb=kb)
    first, second = lock(plan, tmp_path, "a.yml"), lock(plan, tmp_path, "b.yml")
    assert first.read_text().replace("a.yml", "b.yml") == second.read_text()
    entries = load_locked(first).pip
    assert entries and all(len(p.sha256) == 64 for p in entries)
    assert all(p.portable for p in entries)
