"""Driver floors at both edges, from NVIDIA's own table, not from recipes/.

NVIDIA, CUDA Toolkit Release Notes, Table 3 "CUDA Toolkit and Corresponding Driver Versions"
(https://docs.nvidia.com/cuda/archive/11.5.0/cuda-toolkit-release-notes/index.html, and every
later edition's "Older CUDA versions" table):
- "CUDA 11.0.2 GA  >= 450.51.05 (Linux)  >= 451.48 (Windows)": CUDA 11.0's own minimum.
- footnote: CUDA 11.x minor-version compatibility from >= 450.80.02 (Linux) / >= 452.39 (Windows).
A driver that meets a toolkit's own minimum runs it natively (the compatibility guide's whole
point is running *newer* minors on older drivers), so 450.51.05-450.80.01 runs CUDA 11.0 builds
and no other 11.x one.

TensorFlow builds (tensorflow/docs site/en/install/source.md, "Tested build configurations"):
tensorflow_gpu-2.4.0 = CUDA 11.0, tensorflow-2.5.0 = CUDA 11.2.
"""

from __future__ import annotations

import dataclasses

import pytest

from gpuenv.resolve import resolve

GPU = "GeForce RTX 2080 Ti"  # sm_75: SASS in every TF 2.4/2.5 build, so only the driver decides


def tf(describe, kb, driver: str, os_name: str, req: str):  # type: ignore[no-untyped-def]
    plan = resolve(describe(GPU, driver, os_name, "x86_64"), [req], kb=kb)
    return plan, plan.frameworks["tensorflow"]


@pytest.mark.parametrize(
    ("os_name", "own_min", "below"),
    [("linux", "450.51.05", "450.51.04"), ("windows", "451.48", "451.47")],
)
def test_cuda_11_0_runs_from_its_own_minimum(describe, kb, os_name, own_min, below) -> None:  # type: ignore[no-untyped-def]
    plan, fw = tf(describe, kb, own_min, os_name, "tensorflow>=2.4,<2.5")
    assert fw.gpu and fw.cuda == "11.0"
    # natively: no minor-version compatibility involved
    assert not any("minor-version compatibility" in w for w in plan.warnings)
    _, fw = tf(describe, kb, below, os_name, "tensorflow>=2.4,<2.5")
    assert not fw.gpu


@pytest.mark.parametrize(
    ("os_name", "just_below_floor"), [("linux", "450.80.01"), ("windows", "452.38")]
)
def test_between_11_0_and_the_11x_floor_only_11_0_runs(
    describe, kb, os_name, just_below_floor
) -> None:  # type: ignore[no-untyped-def]
    _, fw = tf(describe, kb, just_below_floor, os_name, "tensorflow>=2.4,<2.5")
    assert fw.gpu and fw.cuda == "11.0"
    _, fw = tf(describe, kb, just_below_floor, os_name, "tensorflow>=2.5,<2.6")
    assert not fw.gpu  # CUDA 11.2 needs the 11.x floor (or its own 460.x driver)


@pytest.mark.parametrize(("os_name", "floor"), [("linux", "450.80.02"), ("windows", "452.39")])
def test_the_11x_floor_runs_11_2_through_compatibility(describe, kb, os_name, floor) -> None:  # type: ignore[no-untyped-def]
    plan, fw = tf(describe, kb, floor, os_name, "tensorflow>=2.5,<2.6")
    assert fw.gpu and fw.cuda == "11.2"
    assert any("minor-version compatibility" in w for w in plan.warnings)


def test_a_cuda_11_0_rejection_names_its_own_minimum(describe, kb) -> None:  # type: ignore[no-untyped-def]
    plan, fw = tf(describe, kb, "450.36.06", "linux", "tensorflow>=2.4,<2.5")
    assert not fw.gpu
    assert any("450.51.05" in f for f in plan.fixes)  # the driver that lifts it, not 450.80.02


def test_fixes_for_a_machine_without_a_driver_do_not_say_already(kb) -> None:  # type: ignore[no-untyped-def]
    # a GTX 1080 Ti with no NVIDIA driver installed: the smaller driver is a first install,
    # not an update short of the newest ("already allows" read as if a driver were there)
    from gpuenv.machine import Driver, Gpu, Machine, OSInfo

    bare = Machine(OSInfo("linux"), "x86_64", "linux-64", gpus=(Gpu("GeForce GTX 1080 Ti", "6.1"),))
    plan = resolve(bare, ["tensorflow"], kb=kb, python="3.11")
    assert not any("already" in f for f in plan.fixes), plan.fixes
    assert any("is enough for tensorflow" in f for f in plan.fixes), plan.fixes
    with_driver = dataclasses.replace(bare, driver=Driver("440.33.01"))
    fixes = resolve(with_driver, ["tensorflow"], kb=kb, python="3.11").fixes
    assert any("already allows" in f for f in fixes), fixes
