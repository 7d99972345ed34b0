"""The lock-time overlap check on real wheels: torch 2.15.0 (CUDA 13: nvidia-cudnn-cu13) beside
TensorFlow 2.21.0 `[and-cuda]` (CUDA 12: nvidia-cudnn-cu12), both on the default index, put two
builds of libcudnn on one path. The resolver never plans this pair; a lock of it, made by hand,
fails naming both wheels."""

from __future__ import annotations

import dataclasses

import pytest

from gpuenv.index.config import user_index_config
from gpuenv.index.wheel_records import WheelOverlapError
from gpuenv.lock.pipeline import LockOptions, lock_plan
from gpuenv.resolve import resolve
from gpuenv.resolve.plan import PipRequirement
from localrepos import find_uv

pytestmark = [
    pytest.mark.network,
    pytest.mark.skipif(find_uv() is None, reason="uv is not installed"),
]


def test_torch_cu13_beside_tensorflow_cu12_overlaps_on_real_wheels(describe, kb, tmp_path) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(describe("RTX 4090", "580.95.05", "linux"), ["torch"], kb=kb, python="3.12")
    pip = (PipRequirement("torch==2.15.0"), PipRequirement("tensorflow[and-cuda]==2.21.0"))
    plan = dataclasses.replace(plan, pip=pip, companions=(), constraints=(), conda=())
    out = tmp_path / "pair.conda-lock.yml"
    options = LockOptions(output=out, indexes=user_index_config(), exclude_newer="none")
    with pytest.raises(WheelOverlapError) as caught:
        lock_plan(plan, options)
    text = str(caught.value)
    assert "nvidia_cudnn_cu12-" in text and "nvidia_cudnn_cu13-" in text
    assert "nvidia/cudnn/" in text and not out.exists()
