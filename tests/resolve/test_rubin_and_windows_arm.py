"""Rubin GPUs and Windows on Arm, from primary sources, not from recipes/.

Rubin: pytorch/pytorch PR 190654 ("Add `sm_107` for Rubin support", 2026-07-21): "CUDA 13.4
adds support for the NVIDIA Rubin Architecture (compute capability 10.7)" and "we do not need to
specifically compile with `sm_107` arch flag for the releases, since `sm_107` instructions are
compatible with `sm_100` (just like `sm_103`)". NVIDIA's binary-compatibility rule (CUDA C++
Programming Guide, "Binary Compatibility": a cubin for X.y runs on X.z with z >= y) says the same;
arch-specific (sm_100a) cubins are excluded from it. NVIDIA CUTLASS 4.8.0dev release notes: Rubin
kernels need the R615 driver that ships with CUDA 13.4 GA; the R610 driver is not enough.
PyTorch's Linux CUDA 13 wheels carry sm_100 SASS (.ci/manywheel/build_cuda.sh; measured from
torch-2.11.0's fatbins), so torch plans for Rubin without PTX.

Windows on Arm: no framework publishes a win_arm64 CUDA wheel on the default index or the PyTorch
index (PyTorch "doesn't officially support windows ARM64 wheels": meta-pytorch/torchcodec issue
1672); NVIDIA publishes win_arm64 CUDA torch on its own index (unslothai/unsloth PR 10282).
"""

from __future__ import annotations

import pytest

from gpuenv.errors import GpuenvError
from gpuenv.recipes.archs import coverage
from gpuenv.resolve import resolve

RUBIN = "10.7"


@pytest.mark.parametrize(
    ("sass", "ptx", "expected"),
    [
        (("10.0",), (), "sass"),  # the PR: sm_100 releases run on Rubin
        (("10.3",), (), "sass"),  # a lower minor of the same major
        (("9.0",), ("9.0",), "ptx"),  # another major's SASS never runs; lower PTX JITs
        (("12.0",), ("12.0",), None),  # 12.x is another major, and PTX does not JIT down
        (("11.0",), (), None),
        (("10.0a",), (), None),  # arch-specific cubins are not portable
    ],
)
def test_rubin_runs_sm100_sass_by_the_same_major_rule(sass, ptx, expected) -> None:  # type: ignore[no-untyped-def]
    assert coverage(sass, ptx, RUBIN) == expected


def test_rubin_with_an_r615_driver_plans_torch_on_the_gpu_without_ptx(kb, describe) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(describe(RUBIN, "615.20", "linux", "x86_64"), ["torch"], kb=kb)
    fw = plan.frameworks["torch"]
    assert fw.gpu
    assert fw.cuda is not None and int(fw.cuda.split(".")[0]) >= 12
    assert not any("PTX" in w for w in plan.warnings), plan.warnings


def test_rubin_on_an_older_branch_is_told_to_install_r615(kb, describe) -> None:  # type: ignore[no-untyped-def]
    # R610 (CUDA 13.3's, 610.43.02) predates Rubin: CUTLASS 4.8.0dev says the R610 driver is not
    # enough. Every CUDA build is refused there, whatever its CUDA version.
    plan = resolve(describe(RUBIN, "610.43.02", "linux", "x86_64"), ["torch"], kb=kb)
    assert not plan.frameworks["torch"].gpu
    assert any("615" in f for f in plan.fixes), plan.fixes


def test_rubin_is_no_blackwell_for_the_driver_floor(kb, describe) -> None:  # type: ignore[no-untyped-def]
    # An R580 driver runs Blackwell (10.0, first driver R570) but not Rubin.
    blackwell = resolve(describe("10.0", "580.65.06", "linux", "x86_64"), ["torch"], kb=kb)
    rubin = resolve(describe(RUBIN, "580.65.06", "linux", "x86_64"), ["torch"], kb=kb)
    assert blackwell.frameworks["torch"].gpu
    assert not rubin.frameworks["torch"].gpu


@pytest.mark.parametrize("framework", ["torch", "tensorflow", "jax"])
def test_windows_on_arm_is_refused_with_the_reason_and_the_way_out(kb, describe, framework) -> None:  # type: ignore[no-untyped-def]
    # GB10-class GPU (compute capability 12.1) on Windows on Arm, driver of CUDA 13.4's branch
    with pytest.raises(GpuenvError) as err:
        resolve(describe("12.1", "615.20", "windows", "arm64"), [framework], kb=kb)
    text = str(err.value)
    assert "Windows on Arm (win-arm64)" in text
    # only torch has NVIDIA's own win_arm64 builds, which gpuenv names but does not plan from
    assert ("nvtorch_oot" in text) == (framework == "torch")


def test_windows_on_arm_advice_is_true_under_wsl2(kb, describe) -> None:  # type: ignore[no-untyped-def]
    # The refusal says WSL2 runs torch's Linux aarch64 GPU builds: it does (PyTorch publishes
    # CUDA 13 aarch64 wheels with sm_120 SASS, which runs 12.1 by the same-major rule).
    with pytest.raises(GpuenvError) as err:
        resolve(describe("12.1", "615.20", "windows", "arm64"), ["torch"], kb=kb)
    assert "WSL2 runs" in str(err.value)
    plan = resolve(describe("12.1", "615.20", "wsl", "arm64"), ["torch"], kb=kb)
    assert plan.platform == "linux-aarch64"
    assert plan.frameworks["torch"].gpu
