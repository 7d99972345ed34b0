"""Doctor's diagnoses on constructed machines, plans and verify Reports."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from doctor_inputs import env_for
from gpuenv.doctor import PROBLEM, WARN, Diagnosis, EnvironmentInput, Finding, diagnose
from gpuenv.doctor.driver import max_cuda, recommended_driver
from gpuenv.machine import Driver, Machine, OSInfo
from gpuenv.machine.describe import describe_machine
from gpuenv.recipes import KnowledgeBase
from gpuenv.resolve import resolve
from gpuenv.resolve.plan import Plan
from gpuenv.verify.report import Check, FrameworkReport, Report


def machine(
    kb: KnowledgeBase, gpu: str | None, driver: str | None, os_name: str = "linux"
) -> Machine:
    return describe_machine(kb, gpu=gpu, driver=driver, os_name=os_name, arch=None)


def codes(findings: tuple[Finding, ...] | list[Finding], severity: str | None = None) -> set[str]:
    return {f.code for f in findings if severity is None or f.severity == severity}


def one(d: Diagnosis, code: str) -> Finding:
    hits = [f for f in d.findings if f.code == code]
    assert len(hits) == 1, [f.to_json() for f in d.findings]
    return hits[0]


def test_driver_too_old_for_cu126_build(kb: KnowledgeBase) -> None:
    planned_on = machine(kb, "GeForce GTX 1080 Ti", "560.35.03")
    plan = resolve(planned_on, ["torch"], kb=kb)
    assert plan.frameworks["torch"].cuda == "12.6"
    here = machine(kb, "GeForce GTX 1080 Ti", "470.82.01")
    d = diagnose(here, kb, [env_for(plan)], {})
    found = one(d, "driver-too-old")
    assert found.severity == PROBLEM and found.subject == "default"
    assert "driver too old for the build" in found.what
    assert any("525.60.13" in fix for fix in found.fix)
    assert not d.ok
    assert d.environments[0].gpu == "not used"


def test_driver_too_old_beyond_generation_says_replan(kb: KnowledgeBase) -> None:
    plan = resolve(machine(kb, "GeForce GTX 1080 Ti", "560.35.03"), ["torch"], kb=kb)
    data = plan.to_json()
    data["frameworks"]["torch"]["cuda"] = "13.0"  # a build no Pascal driver can run
    here = machine(kb, "GeForce GTX 1080 Ti", "470.82.01")
    found = one(diagnose(here, kb, [env_for(Plan.from_json(data))], {}), "driver-too-old")
    assert any("R580" in fix and "re-plan" in fix for fix in found.fix)
    kepler = machine(kb, "Tesla K80", "470.82.01")
    found = one(diagnose(kepler, kb, [env_for(plan)], {}), "driver-too-old")
    assert any("R470" in fix and "Kepler" in fix for fix in found.fix)


def test_minor_version_compatibility_is_a_warning(kb: KnowledgeBase) -> None:
    plan = resolve(machine(kb, "GeForce GTX 1080 Ti", "560.35.03"), ["torch"], kb=kb)
    here = machine(kb, "GeForce GTX 1080 Ti", "535.183.01")  # ≥ 525.60.13, < 560.28.03
    d = diagnose(here, kb, [env_for(plan)], {})
    assert one(d, "driver-minor-compat").severity == WARN
    assert d.ok


def test_no_kernel_image_for_pascal_on_cu128(kb: KnowledgeBase) -> None:
    plan = resolve(machine(kb, "GeForce GTX 1080 Ti", "560.35.03"), ["torch"], kb=kb)
    data = plan.to_json()
    data["frameworks"]["torch"].update(version="2.10.0", variant="cu128", cuda="12.8")
    here = machine(kb, "GeForce GTX 1080 Ti", "580.95.05")
    found = one(diagnose(here, kb, [env_for(Plan.from_json(data))], {}), "no-kernel-image")
    assert "sm_61" in found.what and "no kernel image" in found.what


def test_windows_tensorflow_215_cpu_plan_names_wsl2_and_210(kb: KnowledgeBase) -> None:
    here = machine(kb, "GeForce GTX 1080 Ti", "560.94", os_name="windows")
    plan = resolve(here, ["tensorflow==2.15.1"], kb=kb)
    assert plan.accelerator == "cpu"
    d = diagnose(here, kb, [env_for(plan)], {})
    found = one(d, "tensorflow-windows")
    text = " ".join((found.what, *found.why, *found.fix))
    assert "WSL2" in text and "2.10" in text and "2.15.1" in found.what
    cpu = one(d, "cpu-plan")
    assert any("native Windows" in w for w in cpu.why)


def test_installed_tensorflow_version_counts_on_windows(kb: KnowledgeBase) -> None:
    here = machine(kb, "GeForce GTX 1080 Ti", "560.94", os_name="windows")
    plan = resolve(here, ["tensorflow"], kb=kb)
    assert plan.frameworks["tensorflow"].version.startswith("2.10")
    report = Report(
        "python.exe",
        "3.10.11",
        "cuda",
        (FrameworkReport("tensorflow", ok=True, version="2.16.1", build="CPU", device="cpu"),),
    )
    d = diagnose(here, kb, [env_for(plan, report=report)], {})
    assert "2.16.1" in one(d, "tensorflow-windows").what


@pytest.mark.parametrize("value", ["", "-1", "1", "abc"])
def test_cuda_visible_devices_hiding_the_gpu(kb: KnowledgeBase, value: str) -> None:
    here = machine(kb, "GeForce RTX 3090", "580.95.05")
    found = one(diagnose(here, kb, [], {"CUDA_VISIBLE_DEVICES": value}), "cuda-visible-devices")
    assert found.severity == PROBLEM
    assert "hides every GPU" in found.what
    assert any("unset CUDA_VISIBLE_DEVICES" in fix for fix in found.fix)


def test_cuda_visible_devices_partial_and_fine(kb: KnowledgeBase) -> None:
    here = machine(kb, "GeForce RTX 3090", "580.95.05")
    partial = one(diagnose(here, kb, [], {"CUDA_VISIBLE_DEVICES": "0,3"}), "cuda-visible-devices")
    assert partial.severity == WARN and "'3'" in partial.what
    fine = one(diagnose(here, kb, [], {"CUDA_VISIBLE_DEVICES": "0"}), "cuda-visible-devices")
    assert fine.severity == "ok"
    assert "cuda-visible-devices" not in codes(diagnose(here, kb, [], {}).findings)


def test_torch_cpu_build_from_verify_is_surfaced_with_its_fix(kb: KnowledgeBase) -> None:
    here = machine(kb, "GeForce RTX 3090", "580.95.05")
    plan = resolve(here, ["torch"], kb=kb)
    fix = "reinstall the environment from its lockfile (gpuenv install LOCKFILE)"
    report = Report(
        "/envs/default/bin/python",
        plan.python,
        "cuda",
        (
            FrameworkReport(
                "torch",
                ok=False,
                version="2.10.0+cpu",
                build="CPU",
                device="cpu",
                checks=[Check("GPU", False, "the plan promised the GPU; torch does not use it")],
                problems=[
                    "torch 2.10.0+cpu is a CPU build (torch.version.cuda is None); the plan chose"
                    " the cu130 build"
                ],
                fix=[fix],
            ),
        ),
    )
    d = diagnose(here, kb, [env_for(plan, report=report)], {})
    found = one(d, "torch-cpu-build")
    assert found.severity == PROBLEM and fix in found.fix and "CPU build" in found.what
    assert d.environments[0].gpu == "not used" and d.environments[0].verified
    assert not d.ok


def test_windows_dll_errors_get_a_windows_fix(kb: KnowledgeBase) -> None:
    here = machine(kb, "GeForce RTX 3090", "560.94", os_name="windows")
    plan = resolve(here, ["torch"], kb=kb)
    torch = FrameworkReport(
        "torch",
        ok=False,
        problems=[
            "`import torch` fails: [WinError 126] The specified module could not be found."
            ' Error loading "C:\\env\\Lib\\site-packages\\torch\\lib\\fbgemm.dll" or one of its'
            " dependencies."
        ],
        fix=["reinstall the environment from its lockfile (gpuenv install LOCKFILE)"],
    )
    report = Report("python.exe", plan.python, "cuda", (torch,))
    found = one(diagnose(here, kb, [env_for(plan, report=report)], {}), "dll-not-found")
    assert any("Visual C++ Redistributable" in f and "fbgemm.dll" in f for f in found.fix)


def test_tensorflow_cuda_dlls_point_at_cuda_112(kb: KnowledgeBase) -> None:
    here = machine(kb, "GeForce RTX 3090", "560.94", os_name="windows")
    plan = resolve(here, ["tensorflow"], kb=kb)
    tf = FrameworkReport(
        "tensorflow",
        ok=False,
        version="2.10.1",
        problems=[
            "TensorFlow is built with CUDA 64_112 and cuDNN 64_8 but lists no GPU: likely the"
            " CUDA/cuDNN libraries it needs were not found; TensorFlow said: Could not load"
            " dynamic library 'cudart64_110.dll'; dlerror: cudart64_110.dll not found"
        ],
    )
    report = Report("python.exe", plan.python, "cuda", (tf,))
    found = one(diagnose(here, kb, [env_for(plan, report=report)], {}), "dll-not-found")
    assert any("cudatoolkit=11.2 cudnn=8.1.0" in f for f in found.fix)


def test_cpu_plan_on_gpu_machine_says_why(kb: KnowledgeBase) -> None:
    no_gpu_plan = resolve(machine(kb, None, None), ["torch"], kb=kb)
    here = machine(kb, "GeForce RTX 3090", "580.95.05")
    found = one(diagnose(here, kb, [env_for(no_gpu_plan)], {}), "cpu-plan")
    assert found.severity == WARN
    assert "without a GPU" in found.why[0] and "gpuenv setup" in found.fix[0]


def test_gpu_plan_on_machine_without_gpu(kb: KnowledgeBase) -> None:
    plan = resolve(machine(kb, "GeForce RTX 3090", "580.95.05"), ["torch"], kb=kb)
    d = diagnose(machine(kb, None, None), kb, [env_for(plan)], {})
    assert one(d, "gpu-missing").severity == PROBLEM


def test_no_gpu_is_a_warning_only(kb: KnowledgeBase) -> None:
    d = diagnose(machine(kb, None, None), kb, [], {})
    assert codes(d.findings) == {"no-gpu"} and d.ok
    assert d.to_json()["machine"]["gpus"] == []


def test_gpu_without_driver_names_the_generation_cap(kb: KnowledgeBase) -> None:
    pascal = dataclasses.replace(machine(kb, "GeForce GTX 1080 Ti", None), driver=None)
    found = one(diagnose(pascal, kb, [], {}), "no-driver")
    assert found.severity == PROBLEM
    assert any("R580" in f and "Pascal" in f for f in found.fix)
    ampere = dataclasses.replace(machine(kb, "GeForce RTX 3090", None), driver=None)
    advice = recommended_driver(kb, ampere)
    assert advice is not None and advice.minimum is not None and advice.branch is None
    assert any(advice.minimum in f for f in one(diagnose(ampere, kb, [], {}), "no-driver").fix)


def test_wsl_without_gpu_points_at_the_windows_driver(kb: KnowledgeBase) -> None:
    wsl = Machine(
        os=OSInfo("linux", "Ubuntu 24.04", "24.04", wsl=True), arch="x86_64", platform="linux-64"
    )
    found = one(diagnose(wsl, kb, [], {}), "no-gpu")
    assert any("Windows host" in f for f in found.fix)


def test_max_cuda_reported_or_derived(kb: KnowledgeBase) -> None:
    reported = dataclasses.replace(
        machine(kb, "GeForce RTX 3090", "535.183.01"), driver=Driver("535.183.01", "12.2")
    )
    assert max_cuda(kb, reported).version == "12.2"
    derived = machine(kb, "GeForce RTX 3090", "535.183.01")
    assert derived.driver is not None and derived.driver.cuda is None
    result = max_cuda(kb, derived)
    assert result.version == "12.2" and "knowledge base" in result.source


def test_unreadable_metadata_is_a_warning(kb: KnowledgeBase) -> None:
    env = EnvironmentInput("odd", Path("/envs/odd"), {"stack": {}})
    d = diagnose(machine(kb, None, None), kb, [env], {})
    assert one(d, "no-plan").severity == WARN


def test_verify_error_is_reported(kb: KnowledgeBase) -> None:
    plan = resolve(machine(kb, None, None), ["torch"], kb=kb)
    env = dataclasses.replace(env_for(plan), verify_error="EnvironmentNotFound: no interpreter")
    assert one(diagnose(machine(kb, None, None), kb, [env], {}), "verify-failed")


@pytest.mark.parametrize(
    ("os_name", "what"),
    [
        ("macos", "no NVIDIA GPU: macOS has no CUDA driver"),
        ("windows", "no NVIDIA GPU found"),
        ("linux", "no NVIDIA GPU found"),
    ],
)
def test_no_gpu_names_macos_only_on_macos(kb: KnowledgeBase, os_name: str, what: str) -> None:
    here = describe_machine(kb, gpu=None, driver=None, os_name=os_name, arch=None)
    assert one(diagnose(here, kb, [], {}), "no-gpu").what == what


def test_a_jetsons_jetpack_driver_is_not_held_to_desktop_floors(kb: KnowledgeBase) -> None:
    # Thor's JetPack 7.0 prints driver 580.00 (vllm-project/vllm#34470, torch 2.10.0+cu130 on
    # the GPU): numerically below CUDA 13's desktop floor 580.65.06, and no reason to worry
    thor = describe_machine(kb, gpu="Jetson Thor", driver="580.00", os_name="linux", arch="aarch64")
    plan = resolve(thor, ["torch"], kb=kb, python="3.12")
    assert plan.frameworks["torch"].gpu
    d = diagnose(thor, kb, [env_for(plan)], {})
    assert not {"driver-too-old", "no-driver"} & codes(d.findings), [
        f.to_json() for f in d.findings
    ]
    assert not any("580.65.06" in fix for f in d.findings for fix in f.fix)


@pytest.mark.parametrize(
    ("gpu", "driver", "cuda"),
    [
        ("Jetson Thor", "580.00", "13.0"),
        ("Jetson AGX Orin", "540.4.0", "12.6"),
        ("Jetson AGX Orin", "35.3.1", "11.4"),
    ],
)
def test_a_jetsons_cuda_is_its_jetpacks(
    kb: KnowledgeBase, gpu: str, driver: str, cuda: str
) -> None:
    # JetPack 7.0 = CUDA 13.0, 6.2 = 12.6 (nvidia-smi prints "540.4.0 ... CUDA Version: 12.6"),
    # 5.1 = 11.4; the desktop table would say 12.9 for 580.00 and suggest a desktop driver
    board = describe_machine(kb, gpu=gpu, driver=driver, os_name="linux", arch="aarch64")
    assert max_cuda(kb, board).version == cuda
    found = one(diagnose(board, kb, [], {}), "driver")
    assert found.fix == () and f"CUDA up to {cuda}" in found.what
