"""Doctor's driver advice and summary at their edges: which GPU limits the driver, when the
CUDA toolkit's own driver is worth naming, where the advice applies (WSL2: the Windows host),
and what `gpuenv doctor --json` says about the machine and each environment.

Found by mutation testing (scripts/maint/mutation.py, area doctor).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from doctor_inputs import env_for
from gpuenv.doctor import PROBLEM, WARN, EnvironmentInput, Finding, diagnose, machine_summary
from gpuenv.doctor.driver import limiting_generation, needed_driver_text, recommended_driver
from gpuenv.doctor.environment import last_windows_gpu_tensorflow
from gpuenv.machine import Machine, OSInfo
from gpuenv.machine.describe import describe_machine
from gpuenv.recipes import KnowledgeBase
from gpuenv.resolve import resolve
from gpuenv.resolve.plan import Plan
from gpuenv.verify.report import Check, FrameworkReport, Report
from gpuenv.versions import version_key


def newest_linux_driver(kb: KnowledgeBase) -> str:
    """What the newest toolkit of the knowledge base needs on Linux (a new toolkit moves it)."""
    newest = max(kb.toolkits.values(), key=lambda t: version_key(t.version))
    return newest.min_driver_linux


def machine(kb: KnowledgeBase, gpu: str | None, driver: str | None) -> Machine:
    return describe_machine(kb, gpu=gpu, driver=driver, os_name="linux", arch=None)


def test_the_gpu_with_the_oldest_last_driver_branch_limits_the_driver(kb: KnowledgeBase) -> None:
    kepler = machine(kb, "Tesla K80", "470.82.01").gpus[0]  # R470 is its last branch
    maxwell = machine(kb, "GeForce GTX 980", "470.82.01").gpus[0]  # R580
    base = machine(kb, "Tesla K80", "470.82.01")
    for gpus in ((kepler, maxwell), (maxwell, kepler)):
        gen = limiting_generation(kb, dataclasses.replace(base, gpus=gpus))
        assert gen is not None and gen.name == "Kepler"


def test_driver_advice_names_the_windows_host_only_under_wsl(kb: KnowledgeBase) -> None:
    linux = machine(kb, "GeForce RTX 3090", "535.183.01")
    advice = recommended_driver(kb, linux)
    assert advice is not None and "Windows" not in advice.text
    wsl = dataclasses.replace(linux, os=OSInfo("linux", "Ubuntu 24.04", "24.04", wsl=True))
    advice = recommended_driver(kb, wsl)
    assert advice is not None and " on the Windows host (not inside WSL2)" in advice.text


def test_the_newest_toolkits_driver_is_advised_when_the_gpus_branch_reaches_it(
    kb: KnowledgeBase,
) -> None:
    """A knowledge base whose newest toolkit (CUDA 12.4) needs a driver older than the GPU's
    last branch (Maxwell: R580): install that toolkit's driver, not "the newest R580"."""
    older = {v: t for v, t in kb.toolkits.items() if version_key(v) <= version_key("12.4")}
    kb124 = dataclasses.replace(kb, toolkits=older)
    advice = recommended_driver(kb124, machine(kb, "GeForce GTX 980", "470.82.01"))
    assert advice is not None and advice.branch is None
    assert advice.text.startswith("install NVIDIA driver ≥ 550.54.14 ")


def test_the_toolkits_own_driver_is_named_when_it_differs_and_the_gpu_runs_it(
    kb: KnowledgeBase,
) -> None:
    ampere = machine(kb, "GeForce RTX 3090", "470.82.01")
    assert needed_driver_text(kb, ampere, "12.4") == (
        "install NVIDIA driver ≥ 525.60.13 (the floor for CUDA 12.x; CUDA 12.4's own driver,"
        " ≥ 550.54.14, is better)"
    )
    # Kepler ends with R470: CUDA 11.8's own driver (520) is out of its reach, the floor is not
    kepler = machine(kb, "Tesla K80", "418.67")
    assert needed_driver_text(kb, kepler, "11.8") == (
        "install NVIDIA driver ≥ 450.80.02 (the floor for CUDA 11.x)"
    )


def test_json_problems_hold_the_problems_alone(kb: KnowledgeBase) -> None:
    plan = resolve(machine(kb, "GeForce GTX 1080 Ti", "560.35.03"), ["torch"], kb=kb)
    d = diagnose(machine(kb, "GeForce GTX 1080 Ti", "470.82.01"), kb, [env_for(plan)], {})
    severities = {f.severity for f in d.findings}
    assert PROBLEM in severities and severities - {PROBLEM}  # others are there too
    problems = d.to_json()["problems"]
    assert problems and {p["severity"] for p in problems} == {PROBLEM}
    assert len(problems) == sum(f.severity == PROBLEM for f in d.findings)


def test_an_environment_with_warnings_only_still_plans_to_use_the_gpu(kb: KnowledgeBase) -> None:
    plan = resolve(machine(kb, "GeForce GTX 1080 Ti", "560.35.03"), ["torch"], kb=kb)
    here = machine(kb, "GeForce GTX 1080 Ti", "535.183.01")  # minor-version compatibility
    env = diagnose(here, kb, [env_for(plan)], {}).environments[0]
    assert {f.severity for f in env.findings} == {WARN}
    assert env.gpu == "planned"


def test_the_summary_names_the_os_and_falls_back_to_the_plan(kb: KnowledgeBase) -> None:
    here = dataclasses.replace(
        machine(kb, "GeForce RTX 3090", "560.35.03"), os=OSInfo("linux", "Ubuntu 22.04", "22.04")
    )
    assert machine_summary(kb, here)["os"] == "Ubuntu 22.04"
    plan = resolve(here, ["torch"], kb=kb)
    env = env_for(plan)
    del env.metadata["python"], env.metadata["accelerator"]  # an older gpuenv's metadata
    found = diagnose(here, kb, [env], {}).environments[0]
    assert found.python == plan.python and found.accelerator == "cuda"


def _windows(kb: KnowledgeBase) -> Machine:
    return describe_machine(
        kb, gpu="GeForce RTX 3090", driver="560.94", os_name="windows", arch=None
    )


def _tf_report(version: str) -> Report:
    tf = FrameworkReport("tensorflow", ok=True, version=version, build="CPU", device="cpu")
    return Report("python.exe", "3.10.11", "cuda", (tf,))


def test_the_last_windows_gpu_tensorflow_itself_gets_no_warning(kb: KnowledgeBase) -> None:
    last, _ = last_windows_gpu_tensorflow(kb)
    here = _windows(kb)
    plan = resolve(here, ["tensorflow"], kb=kb)
    for version, warned in ((last, False), ("2.16.1", True), ("not-a-version", False)):
        env = dataclasses.replace(env_for(plan), report=_tf_report(version))
        codes = {f.code for f in diagnose(here, kb, [env], {}).findings}
        assert ("tensorflow-windows" in codes) is warned, version


def test_without_tensorflow_in_the_knowledge_base_2_10_is_the_last_windows_gpu_release(
    kb: KnowledgeBase,
) -> None:
    others = {n: f for n, f in kb.frameworks.items() if n != "tensorflow"}
    assert last_windows_gpu_tensorflow(dataclasses.replace(kb, frameworks=others)) == ("2.10", ())


def test_an_environment_without_platform_or_plan_on_windows_is_native(kb: KnowledgeBase) -> None:
    # the machine as a --machine file gives it: its strings parsed from JSON
    here = Machine.from_json(json.loads(json.dumps(_windows(kb).to_json())))
    env = EnvironmentInput("old", Path("/envs/old"), {"stack": {}}, _tf_report("2.16.1"))
    codes = {f.code for f in diagnose(here, kb, [env], {}).findings}
    assert "tensorflow-windows" in codes


def test_a_driver_too_old_names_the_cuda_major_and_its_floor(kb: KnowledgeBase) -> None:
    plan = resolve(machine(kb, "GeForce GTX 1080 Ti", "560.35.03"), ["torch"], kb=kb)
    d = diagnose(machine(kb, "GeForce GTX 1080 Ti", "470.82.01"), kb, [env_for(plan)], {})
    (found,) = [f for f in d.findings if f.code == "driver-too-old"]
    assert found.why[0].startswith("CUDA 12.x builds run on drivers from 525.60.13 on")


def test_a_dll_error_of_another_framework_gets_the_visual_cpp_advice(kb: KnowledgeBase) -> None:
    here = _windows(kb)
    plan = resolve(here, ["torch"], kb=kb)
    jax = FrameworkReport(
        "jax",
        ok=False,
        problems=[
            "`import jax` fails: [WinError 126] The specified module could not be found."
            ' Error loading "C:\\env\\Lib\\site-packages\\jaxlib\\xla_extension.dll"'
        ],
    )
    env = dataclasses.replace(
        env_for(plan), report=Report("python.exe", plan.python, "cuda", (jax,))
    )
    (found,) = [f for f in diagnose(here, kb, [env], {}).findings if f.code == "dll-not-found"]
    assert any("Visual C++ Redistributable" in f for f in found.fix)
    assert not any("TensorFlow" in f for f in found.fix)


def test_the_arch_check_reads_the_installed_releases_build(kb: KnowledgeBase) -> None:
    """torch 2.10.0 cu128 still has sm_70 kernels (2.11.0 cu128 dropped Volta): a V100 with
    2.10.0 installed has no kernel-image problem."""
    volta = machine(kb, "Tesla V100-SXM2-16GB", "580.95.05")
    plan = resolve(volta, ["torch"], kb=kb)
    data = plan.to_json()
    data["frameworks"]["torch"].update(version="2.10.0", variant="cu128", cuda="12.8")
    d = diagnose(volta, kb, [env_for(Plan.from_json(data))], {})
    assert "no-kernel-image" not in {f.code for f in d.findings}
    data["frameworks"]["torch"].update(version="2.11.0")
    d = diagnose(volta, kb, [env_for(Plan.from_json(data))], {})
    assert "no-kernel-image" in {f.code for f in d.findings}


def _visible(here: Machine, value: str) -> Finding:
    from gpuenv.doctor.machine_checks import visible_devices_findings

    (found,) = visible_devices_findings(here, {"CUDA_VISIBLE_DEVICES": value})
    return found


def test_cuda_visible_devices_says_why_each_list_hides_the_gpus(kb: KnowledgeBase) -> None:
    here = machine(kb, "GeForce RTX 3090", "580.95.05")
    assert _visible(here, "-1").why[0] == "-1 is the usual way to hide every GPU on purpose"
    assert _visible(here, "7").why[0] == "'7' is not a GPU here"
    assert _visible(here, "").why[0] == "the list is empty"


def test_the_device_order_note_comes_with_two_gpus_or_more(kb: KnowledgeBase) -> None:
    one_gpu = machine(kb, "GeForce RTX 3090", "580.95.05")
    two = dataclasses.replace(one_gpu, gpus=(one_gpu.gpus[0], one_gpu.gpus[0]))
    assert not any("CUDA_DEVICE_ORDER" in w for w in _visible(one_gpu, "0").why)
    assert any("CUDA_DEVICE_ORDER=PCI_BUS_ID" in w for w in _visible(two, "0").why)


def test_the_driver_finding_names_the_max_cuda_only_when_known(kb: KnowledgeBase) -> None:
    def driver_why(driver: str) -> tuple[str, ...]:
        d = diagnose(machine(kb, "GeForce RTX 3090", driver), kb, [], {})
        (found,) = [f for f in d.machine_findings if f.code == "driver"]
        return found.why

    assert driver_why("535.183.01")[0] == "max CUDA 12.2 (knowledge base: toolkit minimum drivers)"
    assert not any(w.startswith("max CUDA") for w in driver_why("300.10"))


def test_a_gpu_the_build_reaches_only_through_ptx_gets_a_warning(kb: KnowledgeBase) -> None:
    """TensorFlow 2.21's CUDA build has machine code up to sm_90 and PTX for 9.0: a Blackwell
    GPU (sm_100) JIT-compiles its kernels at first start."""
    blackwell = machine(kb, "B200", "580.95.05")
    plan = resolve(blackwell, ["tensorflow==2.21.0"], kb=kb)
    assert plan.frameworks["tensorflow"].variant == "cuda"
    d = diagnose(blackwell, kb, [env_for(plan)], {})
    (found,) = [f for f in d.findings if f.code == "ptx-only"]
    assert found.severity == WARN and "sm_100" in found.what


def test_two_gpus_of_the_same_last_branch_name_the_first(kb: KnowledgeBase) -> None:
    maxwell = machine(kb, "GeForce GTX 980", "470.82.01")
    pascal = machine(kb, "GeForce GTX 1080 Ti", "470.82.01").gpus[0]
    gen = limiting_generation(kb, dataclasses.replace(maxwell, gpus=(maxwell.gpus[0], pascal)))
    assert gen is not None and gen.name == "Maxwell"  # both end with R580


def test_the_newest_toolkits_driver_in_the_gpus_last_branch_is_advised_as_such(
    kb: KnowledgeBase,
) -> None:
    """CUDA 13.0 as the newest toolkit needs 580.65.06, in Maxwell's last branch R580: install
    that driver (a version), not "the newest R580" as when the toolkit is beyond the branch."""
    older = {v: t for v, t in kb.toolkits.items() if version_key(v) <= version_key("13.0")}
    advice = recommended_driver(
        dataclasses.replace(kb, toolkits=older), machine(kb, "GeForce GTX 980", "470.82.01")
    )
    assert advice is not None and advice.minimum == "580.65.06" and advice.branch is None


def test_no_own_driver_hint_where_the_toolkit_needs_just_the_floor(kb: KnowledgeBase) -> None:
    ampere = machine(kb, "GeForce RTX 3090", "470.82.01")
    assert needed_driver_text(kb, ampere, "12.0") == (
        "install NVIDIA driver ≥ 525.60.13 (the floor for CUDA 12.x)"
    )


def test_an_unreadable_driver_version_gives_no_max_cuda(kb: KnowledgeBase) -> None:
    from gpuenv.doctor.driver import max_cuda
    from gpuenv.machine import Driver

    odd = dataclasses.replace(machine(kb, "GeForce RTX 3090", None), driver=Driver("n/a", None))
    assert (max_cuda(kb, odd).version, max_cuda(kb, odd).source) == (None, "")


def test_the_summary_recommends_a_driver_for_gpu_machines_only(kb: KnowledgeBase) -> None:
    with_gpu = machine_summary(kb, machine(kb, "GeForce RTX 3090", "535.183.01"))
    newest = newest_linux_driver(kb)
    assert with_gpu["recommended_driver"].startswith(f"install NVIDIA driver ≥ {newest}")
    assert machine_summary(kb, machine(kb, None, None))["recommended_driver"] is None


def test_metadata_read_from_disk_plans_the_gpu(kb: KnowledgeBase) -> None:
    here = machine(kb, "GeForce RTX 3090", "580.95.05")
    plan = resolve(here, ["torch"], kb=kb)
    env = env_for(plan)
    on_disk = dataclasses.replace(env, metadata=json.loads(json.dumps(env.metadata)))
    assert diagnose(here, kb, [on_disk], {}).environments[0].gpu == "planned"


def test_tensorflow_on_linux_without_platform_or_plan_is_not_native_windows(
    kb: KnowledgeBase,
) -> None:
    here = machine(kb, "GeForce RTX 3090", "580.95.05")
    env = EnvironmentInput("old", Path("/envs/old"), {"stack": {}}, _tf_report("2.16.1"))
    assert "tensorflow-windows" not in {f.code for f in diagnose(here, kb, [env], {}).findings}


def test_a_broken_entry_without_its_own_fix_says_reinstall(kb: KnowledgeBase) -> None:
    env = EnvironmentInput("odd", Path("/envs/odd"), {}, broken="its link points nowhere")
    (found,) = diagnose(machine(kb, None, None), kb, [env], {}).environments[0].findings
    assert found.fix == ("reinstall it (`gpuenv install LOCKFILE --name odd`)",)


def test_a_cpu_plan_on_a_gpu_machine_shows_its_cpu_and_gpu_warnings(kb: KnowledgeBase) -> None:
    here = _windows(kb)
    data = resolve(here, ["tensorflow==2.15.1"], kb=kb).to_json()
    data["warnings"] = ["tensorflow has no GPU build for native Windows", "python pinned to 3.11"]
    d = diagnose(here, kb, [env_for(Plan.from_json(data))], {})
    (found,) = [f for f in d.findings if f.code == "cpu-plan"]
    assert found.why == ("tensorflow has no GPU build for native Windows",)


def test_a_gpu_without_compute_capability_does_not_hide_the_next(kb: KnowledgeBase) -> None:
    pascal = machine(kb, "GeForce GTX 1080 Ti", "580.95.05")
    unknown = dataclasses.replace(pascal.gpus[0], compute_capability=None, index=1)
    here = dataclasses.replace(pascal, gpus=(unknown, pascal.gpus[0]))
    data = resolve(pascal, ["torch"], kb=kb).to_json()
    data["frameworks"]["torch"].update(version="2.10.0", variant="cu128", cuda="12.8")
    d = diagnose(here, kb, [env_for(Plan.from_json(data))], {})
    assert "no-kernel-image" in {f.code for f in d.findings}


def test_the_driver_finding_offers_the_newest_driver_only_when_older(kb: KnowledgeBase) -> None:
    def driver_fix(driver: str) -> tuple[str, ...]:
        d = diagnose(machine(kb, "GeForce RTX 3090", driver), kb, [], {})
        (found,) = [f for f in d.machine_findings if f.code == "driver"]
        return found.fix

    newest = newest_linux_driver(kb)
    (fix,) = driver_fix("535.183.01")
    assert fix.startswith(f"optional, for the newest builds: install NVIDIA driver ≥ {newest}")
    assert driver_fix(f"{int(newest.split('.')[0]) + 5}.10") == ()


def test_native_windows_gets_the_windows_driver_numbers(kb: KnowledgeBase) -> None:
    newest = max(kb.toolkits.values(), key=lambda t: version_key(t.version))
    assert newest.min_driver_windows != newest.min_driver_linux
    advice = recommended_driver(kb, _windows(kb))
    assert advice is not None and advice.minimum == newest.min_driver_windows


def test_a_driver_at_the_newest_minimum_gets_no_upgrade_hint(kb: KnowledgeBase) -> None:
    d = diagnose(machine(kb, "GeForce RTX 3090", newest_linux_driver(kb)), kb, [], {})
    (found,) = [f for f in d.machine_findings if f.code == "driver"]
    assert found.fix == ()


def test_no_driver_names_the_first_gpu(kb: KnowledgeBase) -> None:
    ampere = machine(kb, "GeForce RTX 3090", None)
    pascal = machine(kb, "GeForce GTX 1080 Ti", None).gpus[0]
    two = dataclasses.replace(ampere, gpus=(ampere.gpus[0], pascal), driver=None)
    (found,) = [f for f in diagnose(two, kb, [], {}).machine_findings if f.code == "no-driver"]
    assert f"({ampere.gpus[0].name})" in found.what


def test_the_summary_says_where_the_max_cuda_comes_from(kb: KnowledgeBase) -> None:
    summary = machine_summary(kb, machine(kb, "GeForce RTX 3090", "535.183.01"))
    assert summary["max_cuda_source"] == "knowledge base: toolkit minimum drivers"
    assert machine_summary(kb, machine(kb, None, None))["max_cuda_source"] is None


def test_every_failed_framework_of_a_report_is_a_finding_with_all_its_problems(
    kb: KnowledgeBase,
) -> None:
    here = machine(kb, "GeForce RTX 3090", "580.95.05")
    plan = resolve(here, ["torch"], kb=kb)
    torch = FrameworkReport("torch", ok=True, version="2.9.0", device="cuda:0")
    jax = FrameworkReport("jax", ok=False, problems=["jax sees no GPU", "second", "third"])
    report = Report("python", plan.python, "cuda", (torch, jax))
    d = diagnose(here, kb, [dataclasses.replace(env_for(plan), report=report)], {})
    (found,) = [f for f in d.findings if f.what.startswith("jax ")]
    assert found.what == "jax : jax sees no GPU".replace("  ", " ")
    assert found.why[:2] == ("second", "third")


def test_the_windows_tensorflow_pin_names_its_pythons(kb: KnowledgeBase) -> None:
    last, pythons = last_windows_gpu_tensorflow(kb)
    assert len(pythons) >= 3
    here = _windows(kb)
    env = dataclasses.replace(
        env_for(resolve(here, ["tensorflow"], kb=kb)), report=_tf_report("2.16.1")
    )
    (found,) = [f for f in diagnose(here, kb, [env], {}).findings if f.code == "tensorflow-windows"]
    assert f"TensorFlow {last} (Python {pythons[0]}-{pythons[-1]})" in found.fix[-1]


def test_the_environments_recorded_platform_is_what_is_compared(kb: KnowledgeBase) -> None:
    here = machine(kb, "GeForce RTX 3090", "580.95.05")
    env = env_for(resolve(here, ["torch"], kb=kb))
    env.metadata["platform"] = "linux-aarch64"
    whats = [f.what for f in diagnose(here, kb, [env], {}).findings]
    assert any("built for linux-aarch64, but this machine is linux-64" in w for w in whats)


def test_windows_tensorflow_on_the_cpu_warns_only_where_a_gpu_is_left_unused(
    kb: KnowledgeBase,
) -> None:
    for here, severity in ((_windows(kb), WARN), (_windows_without_gpu(kb), "ok")):
        env = dataclasses.replace(
            env_for(resolve(here, ["tensorflow"], kb=kb)), report=_tf_report("2.16.1")
        )
        d = diagnose(here, kb, [env], {})
        (found,) = [f for f in d.findings if f.code == "tensorflow-windows"]
        assert found.severity == severity


def _windows_without_gpu(kb: KnowledgeBase) -> Machine:
    return describe_machine(kb, gpu=None, driver=None, os_name="windows", arch=None)


def test_a_cpu_plan_without_fixes_points_at_explain(kb: KnowledgeBase) -> None:
    here = _windows(kb)
    data = resolve(here, ["tensorflow==2.15.1"], kb=kb).to_json()
    data["fixes"] = []
    d = diagnose(here, kb, [env_for(Plan.from_json(data))], {})
    (found,) = [f for f in d.findings if f.code == "cpu-plan"]
    assert found.fix == ("`gpuenv explain` lists every rejected GPU build and why",)


def _floor_moved(kb: KnowledgeBase, major: int, linux: str) -> KnowledgeBase:
    """The knowledge base with CUDA `major`'s minor-version-compatibility floor on Linux moved
    (a private edit: what the advice does with such a row, not a claim about NVIDIA's)."""
    moved = dataclasses.replace(kb.cuda_majors[major], min_driver_linux=linux)
    return dataclasses.replace(kb, cuda_majors={**kb.cuda_majors, major: moved})


def test_a_floor_past_the_gpus_last_branch_asks_to_re_plan(kb: KnowledgeBase) -> None:
    # Kepler (Tesla K80) ends with R470 and has kernels up to CUDA 11.x; were CUDA 11's floor
    # in R480, no driver it can take would run a CUDA 11.8 build
    kepler = machine(kb, "Tesla K80", "418.67")
    text = needed_driver_text(_floor_moved(kb, 11, "480.10.01"), kepler, "11.8")
    assert text.startswith("Kepler GPUs end with driver branch R470"), text
    # at R470 itself it is still the driver to install
    at = needed_driver_text(_floor_moved(kb, 11, "470.42.01"), kepler, "11.8")
    assert at == "install NVIDIA driver ≥ 470.42.01 (the floor for CUDA 11.x)"


def test_a_four_digit_own_driver_is_named_beside_a_three_digit_floor(kb: KnowledgeBase) -> None:
    # drivers are compared as versions, not as text ("1000.10" sorts before "525.60.13")
    toolkit = dataclasses.replace(kb.toolkits["12.4"], min_driver_linux="1000.10")
    edited = dataclasses.replace(kb, toolkits={**kb.toolkits, "12.4": toolkit})
    ampere = machine(kb, "GeForce RTX 3090", "470.82.01")
    floor = kb.cuda_majors[12].min_driver_linux
    assert needed_driver_text(edited, ampere, "12.4") == (
        f"install NVIDIA driver ≥ {floor} (the floor for CUDA 12.x; CUDA 12.4's own driver,"
        " ≥ 1000.10, is better)"
    )


def test_a_report_read_back_from_json_names_the_installed_tensorflow(kb: KnowledgeBase) -> None:
    # what verify wrote to the environment, read back: its strings are not the literals'
    report = Report.from_json(json.loads(json.dumps(_tf_report("2.16.1").to_json())))
    env = EnvironmentInput("old", Path("/envs/old"), {"stack": {}}, report)
    found = [
        f for f in diagnose(_windows(kb), kb, [env], {}).findings if f.code == "tensorflow-windows"
    ]
    assert [f.what for f in found] == ["TensorFlow 2.16.1 runs only on the CPU on native Windows"]


def test_an_installed_release_the_knowledge_base_lacks_gets_no_arch_verdict(
    kb: KnowledgeBase,
) -> None:
    # torch 2.11.0 cu128 has no sm_70 kernels (the test above); a 2.11.5 that the knowledge base
    # does not know is not judged by 2.11.0's build
    volta = machine(kb, "Tesla V100-SXM2-16GB", "580.95.05")
    data = resolve(volta, ["torch"], kb=kb).to_json()
    assert not any(r.version == "2.11.5" for r in kb.framework("torch").releases)
    data["frameworks"]["torch"].update(version="2.11.5", variant="cu128", cuda="12.8")
    d = diagnose(volta, kb, [env_for(Plan.from_json(data))], {})
    assert "no-kernel-image" not in {f.code for f in d.findings}


def test_a_cuda_plan_is_never_reported_as_a_cpu_plan(kb: KnowledgeBase) -> None:
    # a CUDA plan whose frameworks name no CUDA version (nothing for the CUDA checks to
    # read) is still no "runs on the CPU" plan
    here = machine(kb, "GeForce RTX 3090", "580.95.05")
    data = resolve(here, ["torch"], kb=kb).to_json()
    assert data["accelerator"] == "cuda"
    for fw in data["frameworks"].values():
        fw["cuda"] = None
    d = diagnose(here, kb, [env_for(Plan.from_json(data))], {})
    assert "cpu-plan" not in {f.code for f in d.findings}


def _failed(name: str, problem: str, *checks: Check) -> Report:
    fw = FrameworkReport(name, ok=False, version="2.16.1", checks=list(checks), problems=[problem])
    return Report("python.exe", "3.10.11", "cuda", (fw,))


def _problems(kb: KnowledgeBase, report: Report) -> list[Finding]:
    env = EnvironmentInput("lab", Path("/envs/lab"), {"stack": {}}, report)
    (environment,) = diagnose(_windows(kb), kb, [env], {}).environments
    return [f for f in environment.findings if f.severity == PROBLEM]


def test_a_failed_framework_lists_the_details_of_its_failed_checks_only(kb: KnowledgeBase) -> None:
    report = _failed(
        "torch",
        "torch.cuda.is_available() is False",
        Check("import", True, "imported in 2.1 s"),
        Check("matmul", False, "RuntimeError: CUDA error"),
        Check("device", False, ""),
    )
    (found,) = _problems(kb, report)
    assert found.why == ("check matmul: RuntimeError: CUDA error",)


def test_tensorflows_dll_error_gets_the_cuda_advice_even_without_a_cuda_dll(
    kb: KnowledgeBase,
) -> None:
    text = "ImportError: DLL load failed while importing _pywrap_tensorflow_internal"
    (tf,) = _problems(kb, _failed("tensorflow", text))
    assert tf.code == "dll-not-found" and any("CUDA 11.2 and cuDNN 8.1" in f for f in tf.fix)
    torch_text = "OSError: [WinError 126] Error loading cudnn64_8.dll or one of its dependencies"
    (torch,) = _problems(kb, _failed("torch", torch_text))
    assert any("Windows could not load CUDA/cuDNN DLLs (cudnn64_8.dll)" in f for f in torch.fix)


def test_the_installed_tensorflow_is_found_among_other_frameworks(kb: KnowledgeBase) -> None:
    torch = FrameworkReport("torch", ok=True, version="2.5.1", build="CPU", device="cpu")
    tf = FrameworkReport("tensorflow", ok=True, version="2.16.1", build="CPU", device="cpu")
    report = Report("python.exe", "3.10.11", "cuda", (torch, tf))
    env = EnvironmentInput("old", Path("/envs/old"), {"stack": {}}, report)
    found = [
        f.what
        for f in diagnose(_windows(kb), kb, [env], {}).findings
        if f.code == "tensorflow-windows"
    ]
    assert found == ["TensorFlow 2.16.1 runs only on the CPU on native Windows"]


def test_the_cuda_floor_named_on_windows_is_the_windows_one(kb: KnowledgeBase) -> None:
    floor = kb.cuda_majors[12]
    assert floor.min_driver_windows != floor.min_driver_linux
    here = describe_machine(
        kb, gpu="GeForce RTX 3090", driver="452.39", os_name="windows", arch=None
    )
    text = needed_driver_text(kb, here, "12.0")
    assert text == f"install NVIDIA driver ≥ {floor.min_driver_windows} (the floor for CUDA 12.x)"


def test_a_driver_at_a_toolkits_minimum_runs_that_toolkit(kb: KnowledgeBase) -> None:
    from gpuenv.doctor.driver import max_cuda

    newest = max(kb.toolkits.values(), key=lambda t: version_key(t.version))
    here = machine(kb, "GeForce RTX 3090", newest.min_driver_linux)
    assert here.driver is not None and here.driver.cuda is None  # derived, not reported
    assert max_cuda(kb, here).version == newest.version


def test_a_toolkits_own_driver_in_the_gpus_last_branch_is_named(kb: KnowledgeBase) -> None:
    # Kepler ends with R470; CUDA 11.4's own driver 470.42.01 is in that very branch
    kepler = machine(kb, "Tesla K80", "418.67")
    own = kb.toolkits["11.4"].min_driver_linux
    assert own.split(".")[0] == limiting_generation(kb, kepler).last_driver_branch  # type: ignore[union-attr]
    assert needed_driver_text(kb, kepler, "11.4").endswith(
        f"CUDA 11.4's own driver, ≥ {own}, is better)"
    )


def test_no_device_order_note_without_gpus(kb: KnowledgeBase) -> None:
    from gpuenv.doctor.machine_checks import visible_devices_findings

    found = visible_devices_findings(machine(kb, None, None), {"CUDA_VISIBLE_DEVICES": "0"})
    assert not any("CUDA_DEVICE_ORDER" in w for f in found for w in f.why), found
