"""`gpuenv lock` checks the locked wheels themselves: two that write one file with different
content (two cuDNN builds on nvidia/cudnn/lib) fail the lock, exit 1, naming both and a path."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gpuenv.index.config import IndexConfig
from gpuenv.index.wheel_records import WheelOverlapError
from gpuenv.lock.pipeline import LockOptions, lock_plan
from gpuenv.resolve import resolve
from gpuenv.resolve.plan import PipRequirement
from localrepos import build_simple_index, build_wheel, find_uv

pytestmark = pytest.mark.skipif(find_uv() is None, reason="uv is not installed")
SO = "nvidia/cudnn/lib/libcudnn.so.9"


def _plan(describe, kb, *requirements: str):  # type: ignore[no-untyped-def]
    plan = resolve(describe(None, None, "linux"), ["torch"], kb=kb, python="3.11")
    pip = tuple(PipRequirement(r, None) for r in requirements)
    return dataclasses.replace(plan, pip=pip, companions=(), constraints=(), conda=())


def _index(tmp_path: Path, same: bool) -> str:
    a = build_wheel(tmp_path / "w", "nvidia-cudnn-cu12", "9.5.1", files={SO: "cudnn for 12"})
    b = build_wheel(
        tmp_path / "w", "nvidia-cudnn-cu13", "9.26.0", files={SO: "cudnn for 12" if same else "13"}
    )
    return build_simple_index(tmp_path / "index", [a, b])


def test_a_lock_whose_wheels_overwrite_each_other_fails(tmp_path, describe, kb) -> None:  # type: ignore[no-untyped-def]
    plan = _plan(describe, kb, "nvidia-cudnn-cu12==9.5.1", "nvidia-cudnn-cu13==9.26.0")
    out = tmp_path / "x.conda-lock.yml"
    options = LockOptions(output=out, indexes=IndexConfig(index_url=_index(tmp_path, False)))
    with pytest.raises(WheelOverlapError) as caught:
        lock_plan(plan, options)
    message = str(caught.value)
    assert "nvidia_cudnn_cu12-9.5.1" in message and "nvidia_cudnn_cu13-9.26.0" in message
    assert SO in message and caught.value.exit_code == 1
    assert not out.exists()


def test_the_same_bytes_on_one_path_lock(tmp_path, describe, kb) -> None:  # type: ignore[no-untyped-def]
    plan = _plan(describe, kb, "nvidia-cudnn-cu12==9.5.1", "nvidia-cudnn-cu13==9.26.0")
    out = tmp_path / "x.conda-lock.yml"
    options = LockOptions(output=out, indexes=IndexConfig(index_url=_index(tmp_path, True)))
    assert lock_plan(plan, options).pip_count == 2 and out.exists()
