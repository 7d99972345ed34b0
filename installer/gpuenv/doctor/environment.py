"""Findings about one gpuenv environment: its plan against this machine, and its verify Report."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from packaging.version import InvalidVersion, Version

from gpuenv.doctor.driver import (
    cuda_driver_floor,
    cuda_own_driver,
    driver_os,
    driver_tuple,
    jetson_soc,
    needed_driver_text,
)
from gpuenv.doctor.findings import OK, PROBLEM, WARN, Finding
from gpuenv.machine import Machine
from gpuenv.recipes import Build, KnowledgeBase, RecipeError
from gpuenv.resolve.plan import FrameworkChoice, Plan
from gpuenv.resolve.rules import arch_support
from gpuenv.verify.report import FrameworkReport, Report

WSL2 = "use WSL2 (https://learn.microsoft.com/windows/wsl/install), where the Linux GPU build runs with this Windows driver"
Add = Callable[..., None]  # the `add` closure: (severity, code, what, why, fix) -> None
_DLL = re.compile(r"([\w.+-]+\.dll)", re.IGNORECASE)


@dataclass(frozen=True)
class EnvironmentInput:
    """One environment as doctor sees it: its store metadata and, when it ran, verify's Report."""

    name: str
    path: Path
    metadata: dict[str, Any]
    report: Optional[Report] = None
    verify_error: Optional[str] = None  # verify could not run (no interpreter, ...)
    broken: Optional[str] = None  # a store entry that is not a working environment: why
    fix: Optional[str] = None  # for a broken entry: what to do about it
    shadowing: tuple[Finding, ...] = ()  # outside CUDA libraries the loader would take first


def environment_findings(
    kb: KnowledgeBase, machine: Machine, env: EnvironmentInput
) -> list[Finding]:
    found: list[Finding] = []

    def add(severity: str, code: str, what: str, why: Any = (), fix: Any = ()) -> None:
        found.append(Finding(severity, code, what, tuple(why), tuple(fix), env.name))

    if env.broken is not None:
        add(
            PROBLEM,
            "broken-entry",
            f"{env.path} is not a working gpuenv environment",
            [env.broken],
            [env.fix or f"reinstall it (`gpuenv install LOCKFILE --name {env.name}`)"],
        )
        return found
    try:
        plan = Plan.from_json(dict(env.metadata["plan"]))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        add(
            WARN,
            "no-plan",
            "its metadata has no readable plan; checked by verify only",
            [f"{type(exc).__name__}: {exc}"],
            ["reinstall it with `gpuenv setup` or `gpuenv install LOCKFILE`"],
        )
        plan = None
    if plan is not None:
        _plan_checks(kb, machine, env, plan, add)
    _windows_tensorflow(kb, machine, env, plan, add)
    _report_checks(env, add)
    found.extend(env.shadowing)
    return found


def _plan_checks(
    kb: KnowledgeBase, machine: Machine, env: EnvironmentInput, plan: Plan, add: Add
) -> None:
    platform = str(env.metadata.get("platform") or plan.platform)
    if machine.platform and platform != machine.platform:
        add(
            PROBLEM,
            "wrong-platform",
            f"built for {platform}, but this machine is {machine.platform}",
            ["environments are not portable across platforms"],
            ["install a lockfile made for this machine (`gpuenv setup`)"],
        )
        return
    gpu_fws = [fw for fw in plan.frameworks.values() if fw.gpu and fw.cuda]
    if plan.accelerator == "cuda" and gpu_fws:
        for fw in gpu_fws:
            _cuda_build_checks(kb, machine, plan, fw, add)
    elif plan.accelerator == "cpu" and machine.gpus:
        _cpu_on_gpu_machine(machine, plan, add)


def _label(fw: FrameworkChoice) -> str:
    return f"{fw.name} {fw.version} [{fw.variant}]"


def _cuda_build_checks(
    kb: KnowledgeBase, machine: Machine, plan: Plan, fw: FrameworkChoice, add: Add
) -> None:
    assert fw.cuda is not None
    label = f"{_label(fw)} (CUDA {fw.cuda})"
    fix = needed_driver_text(kb, machine, fw.cuda)
    if not machine.gpus:
        planned = (plan.gpu or {}).get("name") or "a GPU"
        add(
            PROBLEM,
            "gpu-missing",
            f"{label} was planned for {planned}, but no NVIDIA GPU is visible here",
            list(machine.notes),
            ["if the GPU is there, install or repair its NVIDIA driver (`nvidia-smi`)", fix],
        )
        return
    if jetson_soc(kb, machine) is not None and machine.driver is not None:
        # a Jetson's driver is its JetPack's (resolve checks the JetPack's CUDA): no desktop floor
        return
    os_key = driver_os(machine)
    have = driver_tuple(machine.driver.version if machine.driver else None)
    floor = cuda_driver_floor(kb, fw.cuda, os_key)
    own = cuda_own_driver(kb, fw.cuda, os_key)
    if have is None:
        add(PROBLEM, "no-driver", f"{label} needs an NVIDIA driver; none answered", [], [fix])
    elif floor and have < (driver_tuple(floor) or ()):
        assert machine.driver is not None
        add(
            PROBLEM,
            "driver-too-old",
            f"driver too old for the build: {label} needs driver ≥ {floor}, this machine has"
            f" {machine.driver.version}",
            [
                f"CUDA {fw.cuda.split('.')[0]}.x builds run on drivers from {floor} on (minor-version"
                " compatibility); older drivers cannot load them, so the framework falls back to"
                " the CPU or fails"
            ],
            [fix],
        )
    elif own and have < (driver_tuple(own) or ()):
        assert machine.driver is not None
        add(
            WARN,
            "driver-minor-compat",
            f"{label} runs through CUDA minor-version compatibility on driver"
            f" {machine.driver.version} (CUDA {fw.cuda}'s own driver is ≥ {own})",
            ["PTX JIT-compilation and some newer CUDA features need the toolkit's own driver"],
            [fix],
        )
    _arch_checks(kb, machine, plan, fw, add)


def _find_build(kb: KnowledgeBase, plan: Plan, fw: FrameworkChoice) -> Optional[Build]:
    try:
        framework = kb.framework(fw.name)
    except RecipeError:
        return None
    for release in framework.releases:
        if release.version != fw.version:
            continue
        for build in release.builds:
            if build.variant == fw.variant and plan.platform in build.platforms:
                return build
    return None


def _arch_checks(
    kb: KnowledgeBase, machine: Machine, plan: Plan, fw: FrameworkChoice, add: Add
) -> None:
    build = _find_build(kb, plan, fw)
    if build is None or build.archs is None:
        return
    for gpu in machine.gpus:
        cc = gpu.compute_capability
        if cc is None:
            continue
        sm = f"sm_{cc.replace('.', '')}"
        support = arch_support(build, cc)
        archs = " ".join(f"sm_{a.replace('.', '')}" for a in build.archs.sass)
        if support is None:
            add(
                PROBLEM,
                "no-kernel-image",
                f"{_label(fw)} has no kernels for GPU {gpu.index} ({gpu.name}, {sm}): GPU ops fail"
                " with 'no kernel image is available for execution on the device'",
                [
                    f"the build has machine code for {archs or 'nothing'}"
                    + (f" and PTX for {' '.join(build.archs.ptx)}" if build.archs.ptx else "")
                ],
                [
                    f"re-plan for this GPU: `gpuenv setup` (or `gpuenv resolve {fw.name} --gpu {cc}`)"
                ],
            )
        elif support == "ptx":
            add(
                WARN,
                "ptx-only",
                f"{_label(fw)} has no machine code for {sm}: kernels are JIT-compiled from PTX at"
                " first start (slow, then cached)",
                [f"the build has machine code for {archs}"],
            )


def _cpu_on_gpu_machine(machine: Machine, plan: Plan, add: Add) -> None:
    names = ", ".join(_label(fw) for fw in plan.frameworks.values())
    gpu = machine.gpus[0].name
    if plan.gpu is None:
        why = [
            "the plan was made without a GPU (on a machine without one, or with --no-gpu), but"
            f" this machine has {gpu}"
        ]
        fix = ["re-plan on this machine: `gpuenv setup` picks GPU builds when they run here"]
    else:
        cpu_lines = [w for w in plan.warnings if "CPU" in w or "GPU" in w]
        why = cpu_lines or list(plan.warnings) or ["no GPU build of its frameworks fits this GPU"]
        fix = list(plan.fixes) or ["`gpuenv explain` lists every rejected GPU build and why"]
    add(WARN, "cpu-plan", f"runs on the CPU although this machine has {gpu}: {names}", why, fix)


def _tf_version(env: EnvironmentInput, plan: Optional[Plan]) -> Optional[str]:
    if env.report is not None:
        for fw in env.report.frameworks:
            if fw.name == "tensorflow" and fw.version:
                return fw.version
    if plan is not None and "tensorflow" in plan.frameworks:
        return plan.frameworks["tensorflow"].version
    return None


def last_windows_gpu_tensorflow(kb: KnowledgeBase) -> tuple[str, tuple[str, ...]]:
    """The last TensorFlow release with a GPU build for native Windows, and its Pythons."""
    try:
        releases = kb.framework("tensorflow").releases
    except RecipeError:
        return "2.10", ()
    for release in releases:  # newest first
        if any(b.is_gpu and "win-64" in b.platforms for b in release.builds):
            return release.version, release.python.get("win-64", ())
    return "2.10", ()


def _windows_tensorflow(
    kb: KnowledgeBase, machine: Machine, env: EnvironmentInput, plan: Optional[Plan], add: Add
) -> None:
    platform = str(env.metadata.get("platform") or (plan.platform if plan else ""))
    native = platform.startswith("win") or (machine.os.family == "windows" and not platform)
    version = _tf_version(env, plan)
    if not native or version is None:
        return
    last, pythons = last_windows_gpu_tensorflow(kb)
    try:
        newer = Version(version) > Version(last)
    except InvalidVersion:
        return
    if not newer:
        return
    py = f" (Python {pythons[0]}-{pythons[-1]})" if pythons else ""
    add(
        WARN if machine.gpus else OK,
        "tensorflow-windows",
        f"TensorFlow {version} runs only on the CPU on native Windows",
        [
            f"TensorFlow {last} was the last release with GPU support on native Windows; from 2.11"
            " the Windows package is a CPU build (tensorflow-intel)"
        ],
        [WSL2, f"or pin tensorflow<2.11 (TensorFlow {last}{py}, with CUDA 11.2 and cuDNN 8.1)"],
    )


def _report_checks(env: EnvironmentInput, add: Add) -> None:
    if env.verify_error:
        add(WARN, "verify-failed", f"could not be verified: {env.verify_error}")
        return
    report = env.report
    if report is None:
        return
    for problem in report.problems:
        add(PROBLEM, "environment", problem, [], ["reinstall it (gpuenv install LOCKFILE)"])
    for fw in report.frameworks:
        if fw.ok:
            where = fw.device or "?"
            build = f" [{fw.build}]" if fw.build else ""
            add(OK, f"{fw.name}-ok", f"{fw.name} {fw.version or ''}{build} works, on {where}")
            continue
        _framework_problem(fw, report, add)


def classify(text: str) -> str:
    """A stable code for a verify problem's text."""
    lowered = text.lower()
    if ".dll" in lowered or "winerror 126" in lowered or "dll load failed" in lowered:
        return "dll-not-found"
    if "cuda_visible_devices" in lowered:
        return "cuda-visible-devices"
    if "no kernel image" in lowered:
        return "no-kernel-image"
    if "cpu build" in lowered or "not built with cuda" in lowered or "cpu-only" in lowered:
        return "cpu-build"
    if "driver" in lowered:
        return "driver"
    return "verify"


def _framework_problem(fw: FrameworkReport, report: Report, add: Add) -> None:
    problems = fw.problems or [f"{fw.name} failed a check"]
    code = classify(problems[0])
    if code == "cpu-build":
        code = f"{fw.name}-cpu-build"
    why = list(problems[1:])
    why += [f"check {c.name}: {c.detail}" for c in fw.checks if not c.ok and c.detail]
    fix = list(fw.fix)
    text = " ".join(problems)
    if classify(text) == "dll-not-found":
        code = "dll-not-found"
        fix += _dll_fixes(fw.name, text)
    add(PROBLEM, code, f"{fw.name} {fw.version or ''}: {problems[0]}".replace("  ", " "), why, fix)


def _dll_fixes(framework: str, text: str) -> list[str]:
    dlls = sorted(set(_DLL.findall(text)))
    named = f" ({', '.join(dlls)})" if dlls else ""
    cuda = [
        d
        for d in dlls
        if d.lower().startswith(
            ("cudart", "cudnn", "cublas", "cufft", "cusolver", "cusparse", "curand")
        )
    ]
    if framework == "tensorflow" or cuda:
        return [
            f"Windows could not load CUDA/cuDNN DLLs{named}: TensorFlow ≤ 2.10 on native Windows"
            " needs CUDA 11.2 and cuDNN 8.1 beside it; in a conda environment:"
            " `conda install -c conda-forge cudatoolkit=11.2 cudnn=8.1.0` (TensorFlow's own"
            " guide), or use WSL2"
        ]
    return [
        f"Windows could not load a DLL{named}: install the latest Microsoft Visual C++"
        " Redistributable (x64) from https://learn.microsoft.com/cpp/windows/latest-supported-vc-redist,"
        " then reinstall the environment"
    ]
