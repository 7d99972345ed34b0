"""The resolver as a table of machines and the stacks they must (or must not) get.

Each expectation is a fact from a primary source, not a copy of the knowledge base's answer:
- CUDA minor-version compatibility floors (CUDA Compatibility guide): 11.x >= 450.80.02 (Linux),
  12.x >= 525.60.13 (Linux) / 527.41 (Windows), 13.x >= 580.65.06 (Linux).
- Blackwell consumer GPUs (sm_120) need CUDA >= 12.8 code (CUDA 12.8 release notes).
- Native-Windows GPU TensorFlow ends with 2.10 (tensorflow.org/install/pip, "Windows Native").
- SASS for sm_XY runs only on X.Z with Z >= Y (CUDA C++ Programming Guide, binary compatibility).
- cuDNN >= 9.11 has no kernels below compute capability 7.5 (cuDNN support matrices 9.10.2/9.17.0).
"""

from __future__ import annotations

import pytest
from packaging.version import Version

from gpuenv.machine import Driver, Gpu, Machine, OSInfo, cc_tuple
from gpuenv.resolve import ResolveError, TargetError, resolve
from gpuenv.resolve.rules import arch_support


def cuda_major(plan, name: str) -> int:  # type: ignore[no-untyped-def]
    cuda = plan.frameworks[name].cuda
    assert cuda is not None, f"{name} got no CUDA build"
    return int(cuda.split(".")[0])


def chosen_build(kb, plan, name: str):  # type: ignore[no-untyped-def]
    fw = plan.frameworks[name]
    release = next(r for r in kb.framework(name).releases if r.version == fw.version)
    return next(
        b for b in release.builds if b.variant == fw.variant and plan.platform in b.platforms
    )


def test_pascal_never_gets_a_build_without_its_kernels(describe, kb) -> None:
    plan = resolve(describe("GeForce GTX 1080 Ti", "580.95.05", "linux"), ["torch"], kb=kb)
    assert plan.frameworks["torch"].gpu
    assert arch_support(chosen_build(kb, plan, "torch"), "6.1") == "sass"


def test_driver_below_the_cuda_12_floor_gets_cuda_11(describe, kb) -> None:
    plan = resolve(describe("GeForce RTX 3090", "470.256.02", "linux"), ["torch"], kb=kb)
    assert cuda_major(plan, "torch") == 11
    assert any("527.41" in f or "525.60.13" in f for f in plan.fixes)  # says which driver lifts it


def test_cuda_12_floor_runs_through_minor_version_compatibility(describe, kb) -> None:
    plan = resolve(describe("GeForce RTX 3090", "525.60.13", "linux"), ["torch"], kb=kb)
    assert cuda_major(plan, "torch") == 12
    assert any("minor-version compatibility" in w for w in plan.warnings)


def test_cuda_13_needs_the_580_floor(describe, kb) -> None:
    below = resolve(describe("GeForce RTX 4090", "575.64.05", "linux"), ["torch"], kb=kb)
    assert cuda_major(below, "torch") == 12
    assert any("580" in f for f in below.fixes), below.fixes  # the driver that lifts it
    # CUDA 13.0 release notes: R580 is CUDA 13's minimum driver; at it, the CUDA 13 build wins
    above = resolve(describe("GeForce RTX 4090", "580.95.05", "linux"), ["torch"], kb=kb)
    assert cuda_major(above, "torch") == 13


def test_blackwell_needs_cuda_12_8_or_newer(describe, kb) -> None:
    plan = resolve(describe("GeForce RTX 5090", "570.86.15", "linux"), ["torch"], kb=kb)
    cuda = tuple(int(p) for p in (plan.frameworks["torch"].cuda or "0").split("."))
    assert plan.frameworks["torch"].gpu and cuda >= (12, 8)


def test_native_windows_tensorflow_gpu_is_2_10_at_most(describe, kb) -> None:
    plan = resolve(describe("GeForce RTX 3060", "560.94", "windows"), ["tensorflow"], kb=kb)
    tf = plan.frameworks["tensorflow"]
    assert tf.gpu and Version(tf.version) < Version("2.11")


def test_wsl2_gets_the_linux_gpu_build(describe, kb) -> None:
    plan = resolve(describe("GeForce RTX 3060", "560.94", "wsl"), ["tensorflow"], kb=kb)
    tf = plan.frameworks["tensorflow"]
    assert plan.platform == "linux-64" and tf.gpu and Version(tf.version) >= Version("2.14")
    assert any(p.requirement.startswith("tensorflow[and-cuda]") for p in plan.pip)


def test_macos_has_no_cuda(kb, describe) -> None:
    plan = resolve(describe(None, None, "macos", "arm64"), ["tensorflow", "torch"], kb=kb)
    assert all(not fw.gpu for fw in plan.frameworks.values())
    assert plan.accelerator == "mps"  # torch's Apple GPU backend
    assert plan.platform == "osx-arm64"


def test_open_cudnn_ranges_are_capped_for_pascal(describe, kb) -> None:
    plan = resolve(describe("GeForce GTX 1080 Ti", "580.95.05", "linux"), ["jax"], kb=kb)
    assert plan.frameworks["jax"].gpu  # else the cap below would not be asked for
    assert any(c.startswith("nvidia-cudnn-cu12<9.11") for c in plan.constraints)


def test_turing_needs_no_cudnn_cap(describe, kb) -> None:
    plan = resolve(describe("GeForce RTX 2080 Ti", "580.95.05", "linux"), ["jax"], kb=kb)
    assert not any(c.startswith("nvidia-cudnn") for c in plan.constraints)


def test_a_name_shared_by_two_generations_asks_for_the_compute_capability(describe) -> None:
    with pytest.raises(TargetError, match="compute capability"):
        describe("GeForce GT 730", "470.256.02", "linux")


def test_two_gpus_get_a_build_for_both(kb) -> None:
    machine = Machine(
        os=OSInfo("linux"),
        arch="x86_64",
        platform="linux-64",
        driver=Driver("470.256.02"),
        gpus=(Gpu("Tesla K80", "3.7", index=0), Gpu("GeForce RTX 3090", "8.6", index=1)),
    )
    plan = resolve(machine, ["torch"], kb=kb)
    build = chosen_build(kb, plan, "torch")
    assert all(arch_support(build, cc) for cc in ("3.7", "8.6"))
    only_ampere = resolve(machine, ["torch"], kb=kb, gpu_index=1)
    assert Version(only_ampere.frameworks["torch"].version) >= Version(
        plan.frameworks["torch"].version
    )


def test_no_gpu_flag_plans_for_the_cpu(describe, kb) -> None:
    plan = resolve(
        describe("GeForce RTX 3090", "580.95.05", "linux"), ["torch"], kb=kb, no_gpu=True
    )
    assert plan.accelerator == "cpu" and not plan.frameworks["torch"].gpu


def test_a_driver_too_old_for_everything(describe, kb) -> None:
    # R375 (CUDA 8.0's driver): the oldest default-index torch CUDA wheel is torch 1.0.0's CUDA
    # 9.0 build (torch/version.py '9.0.176'), which needs 384.81 (NVIDIA's driver table; no
    # minor-version compatibility before CUDA 11). An R384 driver such as 384.130 runs it.
    machine = describe("GeForce GTX 1080 Ti", "375.26", "linux")
    plan = resolve(machine, ["torch"], kb=kb)
    assert not plan.frameworks["torch"].gpu
    assert any("driver" in w for w in plan.warnings)
    with pytest.raises(ResolveError, match="driver"):
        resolve(machine, ["torch"], kb=kb, require_gpu=True)


def test_python_pin_is_honoured_or_refused(describe, kb) -> None:
    plan = resolve(
        describe("GeForce RTX 3090", "580.95.05", "linux"), ["torch"], kb=kb, python="3.10"
    )
    assert plan.python == "3.10"
    with pytest.raises(ResolveError):
        resolve(
            describe("GeForce RTX 3090", "580.95.05", "linux"),
            ["tensorflow==2.10.1"],
            kb=kb,
            python="3.13",
        )


def test_every_gpu_build_chosen_runs_on_its_gpu(describe, kb) -> None:
    """For every compute capability the knowledge base knows, on Linux with a current driver:
    whatever torch build is chosen has SASS for the GPU, or PTX at most as new as it."""
    ccs = sorted({g.compute_capability for g in kb.gpus}, key=cc_tuple)
    for cc in ccs:
        if cc_tuple(cc) < (3, 0) or cc in (
            "5.3",
            "6.2",
            "7.2",
            "8.7",
            "11.0",
            "10.1",
        ):  # Fermi; Jetson
            continue
        plan = resolve(describe(cc, "580.95.05", "linux"), ["torch"], kb=kb)
        if plan.frameworks["torch"].gpu:
            assert arch_support(chosen_build(kb, plan, "torch"), cc), cc
