"""torch 1.x from the default index for old code. Expected answers from primary sources, not
from recipes/:

- torch/version.py in the default-index Linux wheels: torch-1.0.0 cuda = '9.0.176',
  torch-1.12.1 cuda = '10.2'; both bundle their CUDA runtime (torch/lib/libcudart-*.so.9.0,
  .so.10.2), so nothing else is installed for CUDA.
- NVIDIA's driver table: CUDA 9.0.76 needs >= 384.81 (Linux), 10.2.89 >= 440.33; no
  minor-version compatibility before CUDA 11 (CUDA Compatibility guide).
- torch 1.6-1.12's wheels carry no PTX and no sm_8x code (their fatbins; PyTorch's own warning
  on an RTX 30: "supports CUDA capabilities sm_37 sm_50 sm_60 sm_70 sm_75"), torch 1.13.1's
  default wheel is CUDA 11.7 with sm_86 (torch/version.py, its fatbins).
- pytorch/pytorch#45028 and the reports it gathers: the pre-1.6 wheels' compute_37/compute_50 PTX
  does not carry an RTX 30 ('sm_86 is not compatible with the current PyTorch installation').
- developer.nvidia.com/cuda-gpus: GTX 1080 Ti = 6.1, RTX 3090 = 8.6.
"""

from __future__ import annotations

import pytest

from gpuenv.resolve import resolve

GTX_1080_TI = "GeForce GTX 1080 Ti"
RTX_3090 = "GeForce RTX 3090"


def torch(describe, kb, gpu: str, driver: str, req: str):  # type: ignore[no-untyped-def]
    plan = resolve(describe(gpu, driver, "linux", "x86_64"), [req], kb=kb)
    return plan, plan.frameworks["torch"]


def test_torch_1_0_runs_cuda_9_0_from_its_own_driver(describe, kb) -> None:  # type: ignore[no-untyped-def]
    plan, fw = torch(describe, kb, GTX_1080_TI, "384.81", "torch==1.0.0")
    assert fw.gpu and fw.cuda == "9.0"
    assert not plan.warnings or not any("system-wide" in w for w in plan.warnings)
    _, fw = torch(describe, kb, GTX_1080_TI, "384.80", "torch==1.0.0")
    assert not fw.gpu


def test_torch_1_12_is_cuda_10_2_from_440_33(describe, kb) -> None:  # type: ignore[no-untyped-def]
    _, fw = torch(describe, kb, GTX_1080_TI, "440.33", "torch==1.12.1")
    assert fw.gpu and fw.cuda == "10.2"
    _, fw = torch(describe, kb, GTX_1080_TI, "440.32", "torch==1.12.1")
    assert not fw.gpu


@pytest.mark.parametrize("req", ["torch==1.12.1", "torch==1.6.0", "torch==1.5.1", "torch==1.0.0"])
def test_torch_1_x_on_an_rtx_3090_is_refused(describe, kb, req) -> None:  # type: ignore[no-untyped-def]
    plan, fw = torch(describe, kb, RTX_3090, "535.104.05", req)
    assert not fw.gpu
    assert any("sm_86" in w for w in plan.warnings), plan.warnings


def test_the_nearest_torch_for_an_rtx_3090_is_1_13(describe, kb) -> None:  # type: ignore[no-untyped-def]
    _, fw = torch(describe, kb, RTX_3090, "535.104.05", "torch<2")
    assert fw.gpu and fw.version == "1.13.1" and fw.cuda == "11.7"
