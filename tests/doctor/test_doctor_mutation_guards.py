"""Doctor's checks that the doctor mutation sweep (benchmarks/mutation/doctor.md) found
unguarded: each test fails with its mutant applied."""

from __future__ import annotations

import json

from doctor_inputs import env_for
from gpuenv.doctor import diagnose
from gpuenv.doctor.driver import limiting_generation, max_cuda
from gpuenv.machine import Driver, Gpu, Machine, OSInfo
from gpuenv.machine.describe import describe_machine
from gpuenv.recipes import KnowledgeBase
from gpuenv.resolve import resolve
from gpuenv.resolve.plan import Plan


def _linux(kb: KnowledgeBase, gpu: str, driver: str) -> Machine:
    return describe_machine(kb, gpu=gpu, driver=driver, os_name="linux", arch="x86_64")


def _codes(machine: Machine, kb: KnowledgeBase, plan: Plan) -> dict[str, str]:
    return {f.code: f.what for f in diagnose(machine, kb, [env_for(plan)], {}).findings}


def test_a_driver_exactly_at_the_toolkits_own_minimum_needs_no_compatibility(kb) -> None:  # type: ignore[no-untyped-def]
    # CUDA 12.6's own Linux minimum is 560.28.03 (NVIDIA's toolkit table): at it, the build
    # runs natively; one below it runs through minor-version compatibility
    plan = resolve(_linux(kb, "GeForce GTX 1080 Ti", "560.35.03"), ["torch"], kb=kb)
    assert plan.frameworks["torch"].cuda == "12.6"
    assert "driver-minor-compat" not in _codes(
        _linux(kb, "GeForce GTX 1080 Ti", "560.28.03"), kb, plan
    )
    assert "driver-minor-compat" in _codes(_linux(kb, "GeForce GTX 1080 Ti", "555.42.02"), kb, plan)


def test_a_missing_gpu_is_named_as_planned(kb) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(_linux(kb, "GeForce RTX 3090", "560.35.03"), ["torch"], kb=kb)
    bare = Machine(OSInfo("linux"), "x86_64", "linux-64")
    assert "planned for GeForce RTX 3090" in _codes(bare, kb, plan)["gpu-missing"]


def test_a_plan_read_back_from_json_is_checked_as_a_cuda_plan(kb) -> None:  # type: ignore[no-untyped-def]
    # a plan from a lockfile's or a file's JSON holds strings that are not the interned literals
    plan = resolve(_linux(kb, "GeForce GTX 1080 Ti", "560.35.03"), ["torch"], kb=kb)
    again = Plan.from_json(json.loads(json.dumps(plan.to_json())))
    assert "driver-too-old" in _codes(_linux(kb, "GeForce GTX 1080 Ti", "470.82.01"), kb, again)


def test_no_kernel_image_says_what_the_build_has(kb) -> None:  # type: ignore[no-untyped-def]
    plan = resolve(_linux(kb, "GeForce GTX 1080 Ti", "560.35.03"), ["torch"], kb=kb)
    data = plan.to_json()
    data["frameworks"]["torch"].update(version="2.10.0", variant="cu128", cuda="12.8")
    here = _linux(kb, "GeForce GTX 1080 Ti", "580.95.05")
    [found] = [
        f
        for f in diagnose(here, kb, [env_for(Plan.from_json(data))], {}).findings
        if f.code == "no-kernel-image"
    ]
    assert any("machine code for sm_" in w and "nothing" not in w for w in found.why), found.why


def test_a_gpu_of_unknown_capability_does_not_hide_the_next_ones_limit(kb) -> None:  # type: ignore[no-untyped-def]
    kepler = Gpu("Tesla K80", "3.7", index=1)
    machine = Machine(
        OSInfo("linux"), "x86_64", "linux-64", driver=Driver("470.82.01"),
        gpus=(Gpu("NVIDIA GPU 10de:ffff", None, index=0), kepler),
    )  # fmt: skip
    gen = limiting_generation(kb, machine)
    assert gen is not None and gen.last_driver_branch == "470"


def test_a_jetson_release_naming_several_jetpacks_reads_the_lowest_cuda(kb) -> None:  # type: ignore[no-untyped-def]
    # r36 names JetPack 6.0 (CUDA 12.2) and 6.2 (CUDA 12.6): the board may be either
    board = describe_machine(
        kb, gpu="Jetson AGX Orin", driver="r36", os_name="linux", arch="aarch64"
    )
    assert max_cuda(kb, board).version == "12.2"


def test_the_installed_tensorflow_is_read_among_other_frameworks(kb) -> None:  # type: ignore[no-untyped-def]
    from gpuenv.verify.report import FrameworkReport, Report

    here = describe_machine(
        kb, gpu="GeForce GTX 1080 Ti", driver="560.94", os_name="windows", arch="x86_64"
    )
    plan = resolve(here, ["tensorflow"], kb=kb)
    report = Report(
        "python.exe", "3.10.11", "cuda",
        (
            FrameworkReport("jax", ok=True, version="0.4.30", build="CPU", device="cpu"),
            FrameworkReport("tensorflow", ok=True, version="2.16.1", build="CPU", device="cpu"),
        ),
    )  # fmt: skip
    found = [f for f in diagnose(here, kb, [env_for(plan, report=report)], {}).findings]
    [tf] = [f for f in found if f.code == "tensorflow-windows"]
    assert "2.16.1" in tf.what and "0.4.30" not in tf.what


def test_a_failed_framework_is_classed_by_its_first_problem(kb) -> None:  # type: ignore[no-untyped-def]
    from gpuenv.verify.report import FrameworkReport, Report

    here = _linux(kb, "GeForce GTX 1080 Ti", "580.95.05")
    plan = resolve(here, ["torch"], kb=kb)
    failed = FrameworkReport(
        "torch", ok=False, version="2.10.0",
        problems=[
            "CUDA error: no kernel image is available for execution on the device",
            "and this torch reads as a CPU-only build",
        ],
    )  # fmt: skip
    report = Report("python", "3.12.1", "cuda", (failed,))
    codes = {f.code for f in diagnose(here, kb, [env_for(plan, report=report)], {}).findings}
    assert "no-kernel-image" in codes and "torch-cpu-build" not in codes, codes
